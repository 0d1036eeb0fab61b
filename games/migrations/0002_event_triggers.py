"""Hand events are append-only in the database itself: UPDATE, DELETE, TRUNCATE refused."""

from django.db import migrations

PG_FORWARD = """
CREATE OR REPLACE FUNCTION games_handevent_refuse() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'hand events are append-only: % refused on games_handevent', TG_OP
        USING ERRCODE = 'restrict_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER games_handevent_no_update BEFORE UPDATE OR DELETE ON games_handevent
    FOR EACH ROW EXECUTE FUNCTION games_handevent_refuse();
CREATE TRIGGER games_handevent_no_truncate BEFORE TRUNCATE ON games_handevent
    FOR EACH STATEMENT EXECUTE FUNCTION games_handevent_refuse();
CREATE TRIGGER games_handseed_no_change BEFORE UPDATE OR DELETE ON games_handseed
    FOR EACH ROW EXECUTE FUNCTION games_handevent_refuse();
"""
PG_BACKWARD = """
DROP TRIGGER IF EXISTS games_handevent_no_update ON games_handevent;
DROP TRIGGER IF EXISTS games_handevent_no_truncate ON games_handevent;
DROP TRIGGER IF EXISTS games_handseed_no_change ON games_handseed;
DROP FUNCTION IF EXISTS games_handevent_refuse();
"""
# SQLite has no TRUNCATE: a DELETE without WHERE fires the row trigger too.
SQLITE_FORWARD = [
    """CREATE TRIGGER games_handevent_no_update BEFORE UPDATE ON games_handevent
       BEGIN SELECT RAISE(ABORT, 'hand events are append-only: UPDATE refused'); END;""",
    """CREATE TRIGGER games_handevent_no_delete BEFORE DELETE ON games_handevent
       BEGIN SELECT RAISE(ABORT, 'hand events are append-only: DELETE refused'); END;""",
    """CREATE TRIGGER games_handseed_no_update BEFORE UPDATE ON games_handseed
       BEGIN SELECT RAISE(ABORT, 'hand seeds are append-only: UPDATE refused'); END;""",
    """CREATE TRIGGER games_handseed_no_delete BEFORE DELETE ON games_handseed
       BEGIN SELECT RAISE(ABORT, 'hand seeds are append-only: DELETE refused'); END;""",
]
SQLITE_BACKWARD = [
    "DROP TRIGGER IF EXISTS games_handevent_no_update;",
    "DROP TRIGGER IF EXISTS games_handevent_no_delete;",
    "DROP TRIGGER IF EXISTS games_handseed_no_update;",
    "DROP TRIGGER IF EXISTS games_handseed_no_delete;",
]


def forward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        # params=None: the PL/pgSQL body's '%' is RAISE's placeholder, not a query parameter.
        schema_editor.execute(PG_FORWARD, params=None)
    elif vendor == "sqlite":
        for sql in SQLITE_FORWARD:
            schema_editor.execute(sql)


def backward(apps, schema_editor):
    vendor = schema_editor.connection.vendor
    if vendor == "postgresql":
        schema_editor.execute(PG_BACKWARD, params=None)
    elif vendor == "sqlite":
        for sql in SQLITE_BACKWARD:
            schema_editor.execute(sql)


class Migration(migrations.Migration):
    dependencies = [("games", "0001_initial")]
    operations = [migrations.RunPython(forward, backward)]

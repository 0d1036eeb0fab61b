#!/usr/bin/env bash
# Every test, in two passes:
#   1. the whole suite against PostgreSQL (DATABASE_URL, or the local server on 127.0.0.1:5432),
#   2. every database test again against the embedded SQLite default.
# Without a reachable PostgreSQL (a laptop with only Python) pass 1 runs on SQLite instead and
# says so; CI sets ACADEMIE_REQUIRE_POSTGRES=1 so that a missing PostgreSQL fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

echo "== lint: ruff, and mypy (strict on games/engine and ledger)"
$BIN/ruff check .
$BIN/mypy games/engine ledger

PG_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/academie}"
if $BIN/python scripts/pg_ready.py "$PG_URL"; then
    REDIS_MARK=()
    if ! $BIN/python -c "import redis; redis.Redis(socket_timeout=2).ping()" 2>/dev/null; then
        if [[ "${ACADEMIE_REQUIRE_POSTGRES:-}" == "1" ]]; then
            echo "Redis is required here but does not answer at 127.0.0.1:6379" >&2
            exit 1
        fi
        echo "== Redis not reachable: the Redis tests are deselected"
        REDIS_MARK=(-m "not redis")
    fi
    echo "== pass 1: all tests on PostgreSQL ($PG_URL)"
    DATABASE_URL="$PG_URL" $BIN/pytest -n 2 -p no:cacheprovider "${REDIS_MARK[@]}" "$@"
    echo "== pass 2: database tests on the embedded SQLite default"
    DATABASE_URL="sqlite:///:memory:" $BIN/pytest -p no:cacheprovider -m "django_db and not postgres and not redis" "$@"
else
    if [[ "${ACADEMIE_REQUIRE_POSTGRES:-}" == "1" ]]; then
        echo "PostgreSQL is required here but does not answer at $PG_URL" >&2
        exit 1
    fi
    echo "== PostgreSQL not reachable: all tests on the embedded SQLite default (PostgreSQL-only and Redis tests deselected)"
    DATABASE_URL="sqlite:///:memory:" $BIN/pytest -p no:cacheprovider -m "not postgres and not redis" "$@"
fi

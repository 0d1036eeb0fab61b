#!/usr/bin/env bash
# Every test, in three passes:
#   1. the whole suite against PostgreSQL (DATABASE_URL, or the local server on 127.0.0.1:5432),
#      then the HTTP benchmark's smoke run (bench/run.py http --smoke) with Redis,
#   2. every database test again against the embedded SQLite default,
#   3. the pages in a real browser (Debian's Chromium, driven by Playwright).
# Without a reachable PostgreSQL (a laptop with only Python) pass 1 runs on SQLite instead and
# says so, as do passes without Redis or Chromium; CI sets ACADEMIE_REQUIRE_POSTGRES=1 so that a
# missing PostgreSQL, Redis or Chromium fails the run (.ci/run starts or installs them).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=.venv/bin

echo "== lint: ruff, and mypy (strict on games/engine and ledger)"
$BIN/ruff check .
$BIN/mypy games/engine ledger

PG_URL="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/academie}"
CHROMIUM=/usr/bin/chromium
if $BIN/python scripts/pg_ready.py "$PG_URL"; then
    REDIS_UP=1
    if ! $BIN/python -c "import redis; redis.Redis(socket_timeout=2).ping()" 2>/dev/null; then
        if [[ "${ACADEMIE_REQUIRE_POSTGRES:-}" == "1" ]]; then
            echo "Redis is required here but does not answer at 127.0.0.1:6379" >&2
            exit 1
        fi
        echo "== Redis not reachable: the Redis tests are deselected"
        REDIS_UP=0
    fi
    PASS1="not browser"
    [[ $REDIS_UP == 1 ]] || PASS1="not browser and not redis"
    echo "== pass 1: all tests on PostgreSQL ($PG_URL)"
    DATABASE_URL="$PG_URL" $BIN/pytest -n 2 -p no:cacheprovider -m "$PASS1" "$@"
    # The HTTP benchmark's smoke run (bench/README.md): gunicorn serving real moves, at least
    # 50 of them, on a database of its own (the test database's name + _smoke_http, made
    # afresh) and Redis database 13, which it empties.
    if [[ $REDIS_UP == 1 ]]; then
        echo "== smoke: bench/run.py http --smoke (at least 50 moves over HTTP)"
        BENCH_DATABASE_URL="${PG_URL%%\?*}_smoke" BENCH_REDIS_URL="redis://127.0.0.1:6379/13" \
            $BIN/python bench/run.py http --smoke
    else
        echo "== Redis not reachable: the HTTP smoke run (bench/run.py http --smoke) is skipped"
    fi
    echo "== pass 2: database tests on the embedded SQLite default"
    DATABASE_URL="sqlite:///:memory:" $BIN/pytest -p no:cacheprovider -m "django_db and not postgres and not redis and not browser" "$@"
    # A process of their own: Playwright's event loop runs in the main thread for the rest of
    # its session, which Django's async-safety check would refuse every later query of.
    if [[ -x $CHROMIUM && $REDIS_UP == 1 ]]; then
        echo "== pass 3: pages in a real browser (Chromium) on PostgreSQL and Redis"
        DJANGO_ALLOW_ASYNC_UNSAFE=true DATABASE_URL="$PG_URL" $BIN/pytest -p no:cacheprovider -m browser "$@"
    elif [[ "${ACADEMIE_REQUIRE_POSTGRES:-}" == "1" ]]; then
        echo "Chromium ($CHROMIUM) and Redis are required here for the browser tests" >&2
        exit 1
    else
        echo "== Chromium ($CHROMIUM) or Redis missing: the browser tests are deselected"
        echo "   (apt-get install -y chromium; never 'playwright install')"
    fi
else
    if [[ "${ACADEMIE_REQUIRE_POSTGRES:-}" == "1" ]]; then
        echo "PostgreSQL is required here but does not answer at $PG_URL" >&2
        exit 1
    fi
    echo "== PostgreSQL not reachable: all tests on the embedded SQLite default (PostgreSQL-only, Redis and browser tests deselected)"
    echo "   (and the HTTP smoke run, bench/run.py http --smoke, which needs PostgreSQL and Redis, is skipped)"
    DATABASE_URL="sqlite:///:memory:" $BIN/pytest -p no:cacheprovider -m "not postgres and not redis and not browser" "$@"
fi

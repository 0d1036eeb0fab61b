# The two commands of the README: `make run` and `make test`.
# Both need only python3 (>= 3.11); everything else is installed into .venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $(STAMP)

# Development settings (DEBUG, the embedded default): the entry points default to production.
run: export DJANGO_SETTINGS_MODULE = config.settings.local
run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_soiree --if-empty --human alice --addr $(or $(ADDR),127.0.0.1:8000)
	$(BIN)/python manage.py serve $(or $(ADDR),127.0.0.1:8000)

test: $(STAMP)
	bash scripts/test.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy games/engine ledger

# The figures of bench/README.md (PostgreSQL and Redis running; see that file).
bench: $(STAMP)
	$(BIN)/pip install -q -e '.[dev,bench]'
	$(BIN)/python bench/run.py engine
	$(BIN)/python bench/run.py ledger
	$(BIN)/python bench/run.py http
	$(BIN)/python bench/run.py services
	$(BIN)/python bench/run.py growth

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .hypothesis

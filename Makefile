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

run: $(STAMP)
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py demo_soiree --if-empty
	$(BIN)/python manage.py serve 127.0.0.1:8000

test: $(STAMP)
	bash scripts/test.sh

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy games/engine ledger

bench: $(STAMP)
	$(BIN)/python bench/engine_bench.py
	DATABASE_URL=$${DATABASE_URL:-postgres://postgres@127.0.0.1:5432/academie} $(BIN)/python bench/ledger_bench.py

clean:
	rm -rf $(VENV) db.sqlite3 .pytest_cache .hypothesis

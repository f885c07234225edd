# Flowdesk: `make run` sets everything up and serves on 127.0.0.1:5000; `make test` runs the suite
# (`make test-unit`: the pure process library's quick tests only).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
# Development commands choose the development settings, so `flask` does not warn about them.
FLASK := FLOWDESK_ENV=$${FLOWDESK_ENV:-development} $(VENV)/bin/flask --app webapp
PYTEST_ARGS ?=

.PHONY: run test test-unit setup setup-test assets migrate seed lint format bench clean

run: setup assets migrate seed
	$(FLASK) dev --host 127.0.0.1 --port 5000

test: setup-test assets
	$(PY) -m pytest $(PYTEST_ARGS)

# The pure process library (no database, Redis, workers or browser), without its slow property and
# timing tests: seconds, for the edit-test loop. `make test` still runs everything.
test-unit: setup-test
	$(PY) -m pytest tests/process -m "not slow" $(PYTEST_ARGS)

setup: $(VENV)/.runtime

setup-test: $(VENV)/.test node_modules/.package-lock.json

$(VENV)/bin/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "Flowdesk needs Python 3.11 or newer")'
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

$(VENV)/.runtime: pyproject.toml constraints.txt | $(VENV)/bin/python
	$(PY) -m pip install --quiet -c constraints.txt -e .
	@touch $@

$(VENV)/.test: pyproject.toml $(VENV)/.runtime
	$(PY) -m pip install --quiet -e '.[test]'
	@touch $@

node_modules/.package-lock.json: package.json package-lock.json
	npm ci --no-audit --no-fund

assets: node_modules/.package-lock.json
	$(PY) scripts/vendor.py

migrate: setup
	$(FLASK) db upgrade

seed: setup
	$(FLASK) seed-demo

lint: setup-test
	$(PY) scripts/check_layers.py
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy

format: setup-test
	$(VENV)/bin/ruff format .
	$(VENV)/bin/ruff check --fix .

bench: setup-test
	@for script in benchmarks/*.py; do echo "== $$script"; $(PY) $$script || exit 1; done

clean:
	rm -rf $(VENV) node_modules static/vendor

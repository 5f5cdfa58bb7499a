# Two entry points: `make run` starts the agent, `make test` runs the whole suite (lint and types first).
# Each creates .venv on first use and installs what it needs.
PY ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

$(STAMP): pyproject.toml
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "LACA needs Python 3.11 or newer (set PY=/path/to/python3.11)"; exit 2; }
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[test]'
	@touch $(STAMP)

LINT_PATHS := framework_core tests benchmarks run_framework.py setup.py

.PHONY: run lint test bench venv clean
venv: $(STAMP)

run: $(STAMP)
	@$(BIN)/python run_framework.py $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/mypy framework_core

test: lint
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

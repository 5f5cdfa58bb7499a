# Two entry points: `make run` starts the agent, `make test` runs the whole suite (lint and types first).
# Each creates .venv on first use and installs what it needs.
PY ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

# `make run` installs what LACA needs; `make test` adds the test and lint tools. Each says what it is doing.
$(RUN_STAMP): pyproject.toml
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "LACA needs Python 3.11 or newer (set PY=/path/to/python3.11)"; exit 2; }
	@echo "First run: creating $(VENV) and installing LACA's dependencies (a minute or two, once)…"
	@$(PY) -m venv $(VENV)
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e . && touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP)
	@echo "Installing the test and lint tools into $(VENV) (once)…"
	@$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test]'
	@touch $(STAMP)

LINT_PATHS := framework_core tests benchmarks run_framework.py setup.py
# The npm reference MCP servers the tests start where node is present (fetched into the npm cache once; the
# tests run them offline and are skipped, with the reason, where they are not there).
NPM_SERVERS := @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem

.PHONY: run lint test bench venv clean npm-servers
venv: $(STAMP)

run: $(RUN_STAMP)
	@$(BIN)/python run_framework.py $(ARGS)

lint: $(STAMP)
	$(BIN)/ruff check $(LINT_PATHS)
	$(BIN)/mypy framework_core

npm-servers:
	@command -v npx >/dev/null 2>&1 || { echo "node is not installed: the npm MCP server tests are skipped"; exit 0; }; \
	for p in $(NPM_SERVERS); do timeout 300 npx -y -p $$p node -e 0 </dev/null >/dev/null 2>&1 || \
		echo "$$p could not be fetched: its tests are skipped"; done

test: lint npm-servers
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

bench: $(STAMP)
	$(BIN)/python -m benchmarks.run_all $(ARGS)

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

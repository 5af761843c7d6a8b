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

test: install
	$(BIN)/python -m pytest

lint: install
	$(BIN)/ruff check memory_chains tests scripts
	$(BIN)/ruff format --check memory_chains tests scripts
	$(BIN)/mypy
	$(BIN)/mypy scripts

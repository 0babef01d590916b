# `make test` works on a fresh machine: it creates .venv, installs the project with its
# dev extra, and runs the test suite. Re-running only reinstalls when pyproject.toml changes.
PYTHON ?= python3
VENV := .venv
PIP := $(VENV)/bin/pip --disable-pip-version-check

.PHONY: test lint

test: $(VENV)/.installed
	$(VENV)/bin/python -m pytest

lint: $(VENV)/.installed
	$(VENV)/bin/ruff check lettuce_build tests
	$(VENV)/bin/ruff format --check lettuce_build tests

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) install -q --upgrade pip
	$(PIP) install -q -e '.[dev]'
	touch $@

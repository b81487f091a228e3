# Two commands from a clean clone (see README):  make demo   ·   make test
PYTHON ?= python3
VENV   ?= .venv
BIN     = $(VENV)/bin
STAMP   = $(VENV)/.installed

.PHONY: demo test lint typecheck pytest fault clean

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/tablectl demo

test: lint typecheck pytest

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .

typecheck: $(STAMP)
	$(BIN)/mypy

# Two workers: most tests wait on real processes (brokers, simulators), so two halve the wall
# time even on a 2-core machine. Every test owns its broker, ports and files, so order is free.
pytest: $(STAMP)
	$(BIN)/python -m pytest -q -p no:cacheprovider -n 2

fault: $(STAMP)
	$(BIN)/python -m pytest -m fault -q -p no:cacheprovider

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .hypothesis

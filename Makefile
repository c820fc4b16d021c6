# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test typecheck docs bench lint clean

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

$(VENV)/.dev: $(VENV)/.base
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

# the public API's modules (gradc.tree_util once it exists); their strictness is [tool.mypy] in pyproject.toml
TYPED := gradc/__init__.py gradc/api.py gradc/derivatives/__init__.py gradc/derivatives/check.py \
	gradc/derivatives/modes.py gradc/trace/control.py gradc/trace/checkpoint.py gradc/errors.py gradc/version.py \
	gradc/stages.py gradc/ir/graph.py gradc/ir/printer.py gradc/ir/dot.py gradc/backends/display.py \
	gradc/backends/numpy/reload.py gradc/backends/c/unit.py gradc/tree_util/*.py gradc/derivatives/jit.py \
	gradc/derivatives/vectorize.py gradc/derivatives/pickling.py

demo: $(VENV)/.base  ## compile the tutorial loss's gradient, show IR and code, run it
	$(PY) examples/demo.py

test: $(VENV)/.test  ## the whole suite (doctests included) and the linter
	$(PY) -m pytest -q tests gradc --doctest-modules
	$(PY) -m ruff check .

typecheck: $(VENV)/.dev  ## mypy on the public API
	$(PY) -m mypy $(TYPED)

docs: $(VENV)/.dev  ## run every example of docs/ (a stale one fails), then build the site into site/ (warnings are errors)
	$(PY) -m pytest -q tests/test_docs.py
	$(PY) -m mkdocs build --strict --quiet

bench: $(VENV)/.base  ## ratios against hand-written NumPy (and peers when installed): NumPy target, then C target
	$(PY) benchmarks/run.py
	$(PY) benchmarks/c_target.py

clean:
	rm -rf $(VENV) build *.egg-info site

# Two commands do all set-up on a fresh clone: `make demo` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test docs bench lint clean

$(VENV)/.base: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $@

$(VENV)/.test: $(VENV)/.base
	$(PY) -m pip install --quiet -e ".[test]"
	touch $@

$(VENV)/.dev: $(VENV)/.test
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $@

demo: $(VENV)/.base  ## compile the tutorial loss's gradient, show IR and code, run it
	$(PY) examples/demo.py

test: $(VENV)/.test  ## the whole suite (doctests included) and the linter
	$(PY) -m pytest -q tests gradc --doctest-modules
	$(PY) -m ruff check .

docs: $(VENV)/.dev  ## run every example of docs/ (a stale one fails), then build the site into site/ (warnings are errors)
	$(PY) -m pytest -q tests/test_docs.py
	$(PY) -m mkdocs build --strict --quiet

bench: $(VENV)/.base  ## ratios against hand-written NumPy (and peers when installed): NumPy target, then C target
	$(PY) benchmarks/run.py
	$(PY) benchmarks/c_target.py

clean:
	rm -rf $(VENV) build *.egg-info site

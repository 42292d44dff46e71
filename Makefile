# `make demo` grades example submissions; `make test` installs everything and runs the tests.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo install release clean

$(STAMP): requirements.txt pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .   # the why17 command (requirements.txt pins the rest)
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m ruff check .
	$(PY) -m autograder generate --check
	$(PY) -m pytest -q -n auto --maxprocesses 4 tests

# The sample class: the reference, the untouched stubs and classic mistakes (autograder/lessons/why17/fixtures/demo_class.py).
demo: $(STAMP)
	$(PY) -m autograder.lessons.why17.fixtures.demo_class build out/demo-class
	$(PY) -m autograder grade-all out/demo-class --out out/demo --force
	$(PY) -m autograder.lessons.why17.fixtures.demo_class table out/demo

release: $(STAMP)
	$(PY) -m autograder release why17 --out out

clean:
	rm -rf $(VENV) out

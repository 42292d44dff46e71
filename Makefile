# `make demo` grades example submissions; `make test` installs everything and runs the tests.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test demo install release clean

$(STAMP): requirements.txt
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.txt
	touch $(STAMP)

install: $(STAMP)

test: $(STAMP)
	$(PY) -m autograder generate --check
	$(PY) -m pytest -q tests

demo: $(STAMP)
	$(PY) -m autograder grade solutions/why17 --out out/reference-results.json
	$(PY) -m autograder grade assignments/why17 --out out/stub-results.json

release: $(STAMP)
	$(PY) -m autograder release why17 --out out

clean:
	rm -rf $(VENV) out

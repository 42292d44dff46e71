# `make demo` grades example submissions; `make test` installs everything and runs the tests;
# `make check` runs the fast tier of the tests while working.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: test check demo install release clean

UV := uv==0.13.8
TORCH = $(shell grep -m1 -E '^torch==' requirements.txt | cut -d' ' -f1)

# pip installs torch (it reads this machine's pip config, which may point at a local wheel) and uv;
# uv installs the other ~90 packages in seconds, where pip takes a minute (less those in
# requirements-exclude.txt, which says why each is left out). Then the bytecode of what
# pip installed (torch, sympy, ...) is compiled on every core (compileall skips what uv compiled):
# the grader's sandboxed children cannot write it, and compiling sympy in a child costs seconds.
# The project's own modules are compiled too (every child compiles autograder/runtime/ otherwise).
# The packages' own test suites (*/tests/, torch's testing/_internal) are left out: nothing imports
# them, and they were a third of the step (15 s instead of 24 s on 2 cores).
# Last, an empty pytest run that may write bytecode stores pytest's assert-rewritten copies of its
# plugins' packages (hypothesis, xdist, anyio, ...): where PYTHONDONTWRITEBYTECODE is set (as on
# CI), every pytest process (the suite's workers, each public-test run) redoes them, 1.9 CPU s each.
$(STAMP): requirements.txt requirements-exclude.txt pyproject.toml
	$(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(PY) install --quiet --no-compile $(UV) "$(TORCH)"
	$(PY) -m uv pip install --quiet --compile-bytecode --python $(PY) --excludes requirements-exclude.txt pip -r requirements.txt
	$(PY) -m compileall -q -j 0 -x '/py312_|/tests/|/torch/testing/_internal/' "$$($(PY) -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")" > /dev/null
	$(PY) -m uv pip install --quiet --python $(PY) --no-deps --no-build-isolation -e .   # the why17 command (requirements.txt pins the rest)
	$(PY) -m compileall -q -j 0 autograder shared > /dev/null   # the project's own bytecode, for the same reason
	tmp=$$(mktemp -d) && cd $$tmp && env -u PYTHONDONTWRITEBYTECODE $(abspath $(PY)) -m pytest --collect-only -q \
	  -p no:cacheprovider -c /dev/null $$tmp > /dev/null; status=$$?; rmdir $$tmp; test $$status = 5   # 5: no tests
	touch $(STAMP)

install: $(STAMP)

# pytest-xdist workers: one more than the cores, at most 4. The suite waits on children, timeouts
# and Slurm part of the time: with a third worker on 2 cores, idle CPU during the suite fell from 4%
# to 1% (vmstat). The wall-clock gain is within this shared machine's drift (docs/maintaining.md).
TEST_WORKERS := $(shell $(PYTHON) -c "import os; print(min((os.cpu_count() or 1) + 1, 4))")

test: $(STAMP)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports --no-cache
	$(PY) -m autograder generate --check
	$(PY) -m pytest -q -n $(TEST_WORKERS) tests

# The fast tier, for the loop while working: every test not marked slow (pyproject.toml's markers:
# gradings of many submissions, real nbgrader, Chromium, Slurm daemons, the notebook, fresh venvs
# are left out), on the same workers as `make test`; under 2 minutes on 2 cores. Each package of
# autograder/ and shared/ keeps tests here. `make test` (what CI runs) is still every test.
check: $(STAMP)
	$(PY) -m pytest -q -n $(TEST_WORKERS) -m "not slow" tests

# The sample class: the reference, the untouched stubs and classic mistakes (autograder/lessons/why17/fixtures/demo_class.py).
demo: $(STAMP)
	$(PY) -m autograder.lessons.why17.fixtures.demo_class build out/demo-class
	$(PY) -m autograder grade-all out/demo-class --out out/demo --force
	$(PY) -m autograder.lessons.why17.fixtures.demo_class table out/demo

release: $(STAMP)
	$(PY) -m autograder release why17 --out out

# Only what make itself wrote: a term's record (out/grades: grades, overrides, extensions, the
# regrade log and submission dates) is never deleted (docs/semester.md).
clean:
	rm -rf $(VENV) out/demo-class out/demo out/why17-student.zip

"""How the suite splits across pytest-xdist workers (``make test`` runs ``pytest -n``).

Each test module goes to one worker whole, so a module's expensive fixture (a graded class, an
nbgrader course, a notebook run) is built once, not once per worker. The modules that start a
Slurm cluster go to one worker together: the cluster is a session fixture, and one per worker
would start two sets of daemons on one machine. The modules that take longest start first, so
that no worker is left with a long module while the others have finished.

Two modules are longer than a fair share of the run: their tests go out in a few units each
(SPLIT), each unit paying its own module fixtures (a grading of the baseline, a probe of the
sandbox). A test that waits out time limits in wall-clock time is a unit of its own, handed out
first (ALONE), so that its wait overlaps the other workers' work instead of ending the run.
"""
from __future__ import annotations

import collections
import os

import hypothesis
import pytest

from autograder.core import settings

# Gradings repeat from run to run and clone to clone: a fixed simulated-GPU secret (the grader
# would otherwise generate one per course folder, autograder/gpu/seed.py). Tests of the secret
# itself set or clear it.
os.environ.setdefault(settings.SIM_SECRET.name, "the test suite's fixed secret")

#: Test modules that share the session's Slurm cluster (tests/batch/slurm/fixtures.py): one work unit.
SLURM_MODULES = ("tests/batch/test_slurm_grade_all.py", "tests/batch/test_slurm_queue.py")
#: The longest modules, longest first (seconds in one serial run on 2 cores, Dec 2026: the
#: adversarial set about 250, nbgrader 76, grade-all 80, Slurm 70, attacks 47, notebook 44, ...):
#: they are handed out before the rest.
LONGEST_FIRST = ("tests/lessons/why17/test_gpu_adversarial.py", "tests/exports/test_nbgrader.py",
                 "tests/batch/test_batch_grade_all.py",
                 *SLURM_MODULES,
                 "tests/sandbox/test_security_attacks.py", "tests/lessons/why17/test_notebook.py",
                 "tests/lessons/why17/test_grade_wrong.py", "tests/lessons/why17/test_public_tests.py",
                 "tests/shared/test_decode_bench.py", "tests/core/test_late.py", "tests/exports/test_gradescope.py",
                 "tests/exports/test_bundle.py", "tests/shared/test_simgpu_command.py",
                 "tests/lessons/why17/test_markers.py")

#: Modules handed out in this many units (a test's unit from its id): each is longer than a
#: worker's fair share of the run (Dec 2026: 187 and 35 gradings).
SPLIT = {"tests/lessons/why17/test_gpu_adversarial.py": 4, "tests/sandbox/test_security_attacks.py": 3}
#: Tests that spend most of their time waiting out time limits (the attack that never returns
#: hangs each call that reaches it until the call's limit): a unit each, handed out first.
ALONE = ("tests/sandbox/test_security_attacks.py::"
         "test_attack_gains_nothing_and_honest_work_is_still_graded[sleep_forever]",)


def work_units(nodeids: list[str]) -> dict[str, str]:
    """The unit of work each test goes to a worker in: its module, the Slurm modules together,
    the test alone (ALONE), or for a SPLIT module one of its shares, dealt in turn."""
    units, dealt = {}, collections.Counter()
    for nodeid in nodeids:
        module = nodeid.split("::", 1)[0]
        if nodeid in ALONE:
            units[nodeid] = nodeid
        elif module in SLURM_MODULES:
            units[nodeid] = "slurm"
        elif module in SPLIT:
            units[nodeid] = f"{module}::{dealt[module] % SPLIT[module]}"
            dealt[module] += 1
        else:
            units[nodeid] = module
    return units


def _scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """LoadScope by work_unit: by module (classes stay with their module), but SPLIT and ALONE."""

        units: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.units is None:          # the run's collection, in order, is known by now
                self.units = work_units(self.collection)
            return self.units[nodeid]

    config.option.loadscopereorder = False     # keep the order pytest_collection_modifyitems sets
    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """The ALONE tests, then the longest modules first (a stable sort: the rest keep their order)."""
    rank = {module: i for i, module in enumerate(LONGEST_FIRST)}
    alone = ALONE if hasattr(config, "workerinput") else ()    # under xdist only: else a module runs in two parts
    items.sort(key=lambda item: -1 if item.nodeid in alone else rank.get(item.nodeid.split("::", 1)[0], len(rank)))


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Schedule by module whenever the suite runs under xdist (any --dist mode but 'no')."""
    return _scheduler(config, log)


# Hunting counterexamples with fresh hypothesis draws (the why17 laws beside their table of cases,
# tests/lessons/why17/test_law_verdicts.py): derandomized, so a run repeats; no deadline, for each case calls a
# sandboxed child; no shrinking, for the tests assert verdicts, not the case a message quotes.
hypothesis.settings.register_profile(
    "why17-hunt", derandomize=True, deadline=None, database=None, max_examples=100,
    phases=(hypothesis.Phase.explicit, hypothesis.Phase.generate), suppress_health_check=list(hypothesis.HealthCheck))

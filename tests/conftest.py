"""How the suite splits across pytest-xdist workers (``make test`` runs ``pytest -n``).

Each test module goes to one worker whole, so a module's expensive fixture (a graded class, an
nbgrader course, a notebook run) is built once, not once per worker. The modules that start a
Slurm cluster go to one worker together: the cluster is a session fixture, and one per worker
would start two sets of daemons on one machine. The modules that take longest start first, so
that no worker is left with a long module while the others have finished.
"""
from __future__ import annotations

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


def _scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """LoadScope by module (classes stay with their module); the Slurm modules together."""

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "slurm" if module in SLURM_MODULES else module

    config.option.loadscopereorder = False     # keep the order pytest_collection_modifyitems sets
    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """The longest modules first (a stable sort: the rest keep their order)."""
    rank = {module: i for i, module in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.nodeid.split("::", 1)[0], len(rank)))


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

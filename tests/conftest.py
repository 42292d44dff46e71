"""How the suite splits across pytest-xdist workers (``make test`` runs ``pytest -n``).

Each test module goes to one worker whole, so a module's expensive fixture (a graded class, an
nbgrader course, a notebook run) is built once, not once per worker. The modules that start a
Slurm cluster go to one worker together: the cluster is a session fixture, and one per worker
would start two sets of daemons on one machine.
"""
from __future__ import annotations

import pytest

#: Test modules that share the session's Slurm cluster (tests/slurm/fixtures.py): one work unit.
SLURM_MODULES = ("tests/test_slurm_grade_all.py", "tests/test_slurm_queue.py")


def _scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """LoadScope by module (classes stay with their module); the Slurm modules together."""

        def _split_scope(self, nodeid: str) -> str:
            module = nodeid.split("::", 1)[0]
            return "slurm" if module in SLURM_MODULES else module

    return ModuleScheduling(config, log)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """Schedule by module whenever the suite runs under xdist (any --dist mode but 'no')."""
    return _scheduler(config, log)

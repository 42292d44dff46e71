"""How the suite splits across pytest-xdist workers (``make test`` runs ``pytest -n``).

Each test module goes to one worker whole, so a module's expensive fixture (a graded class, an
nbgrader course, a notebook run) is built once, not once per worker. The modules that start a
Slurm cluster go to one worker together: the cluster is a session fixture, and one per worker
would start two sets of daemons on one machine. The modules that take longest start first, so
that no worker is left with a long module while the others have finished.

Two modules are longer than a fair share of the run: the cases of their parametrized test go out
in a few units each (SPLIT), each unit paying its own module fixtures (a grading of the baseline, a probe of the
sandbox). Long tests that need no fixture of their module go out alone (ALONE). A test that
waits out time limits in wall-clock time goes out alone and first (ALONE_FIRST), so that its
wait overlaps the other workers' work instead of ending the run.
"""
from __future__ import annotations

import collections
import os

import hypothesis
import pytest

from autograder.core import settings

# Gradings repeat from run to run and clone to clone: a fixed simulated-GPU secret (the grader
# would otherwise generate one per course folder, autograder/grading/simseed.py). Tests of the secret
# itself set or clear it.
os.environ.setdefault(settings.SIM_SECRET.name, "the test suite's fixed secret")

#: Test modules that share the session's Slurm cluster (tests/batch/slurm/fixtures.py): one work unit.
SLURM_MODULES = ("tests/batch/test_slurm_grade_all.py", "tests/batch/test_slurm_queue.py")
#: The longest modules, longest first (each module's seconds summed over its tests in a run of
#: `make test` on a loaded 2-core machine, Dec 2026, bench/suite_time.py: the adversarial set 653,
#: the attacks 608, grade-all 493, Slurm 470, the public tests 401, nbgrader's class 329, ...):
#: they are handed out before the rest.
LONGEST_FIRST = ("tests/lessons/why17/test_gpu_adversarial.py", "tests/sandbox/test_security_attacks.py",
                 "tests/batch/test_batch_grade_all.py", *SLURM_MODULES,
                 "tests/lessons/why17/test_public_tests.py", "tests/exports/test_nbgrader_class.py",
                 "tests/core/test_late.py", "tests/lessons/why17/test_gpu_checks.py",
                 "tests/batch/test_grade_all_record.py", "tests/shared/test_decode_bench.py",
                 "tests/exports/test_gradescope.py", "tests/core/test_intake_attacks.py",
                 "tests/lessons/why17/test_notebook.py", "tests/exports/test_gradescope_runtime.py",
                 "tests/batch/test_grade_all_semester.py", "tests/grading/test_realgpu.py",
                 "tests/exports/test_nbgrader.py", "tests/shared/test_simgpu_command.py",
                 "tests/classdata/test_batch_regrades.py", "tests/classdata/test_batch_partial.py",
                 "tests/gpu/test_simgpu_attacks.py", "tests/exports/test_bundle.py",
                 "tests/lessons/why17/test_grade_wrong.py", "tests/core/test_second_assignment.py",
                 "tests/lessons/why17/test_markers.py")

#: Parametrized tests whose cases are dealt in turn into this many units: each module is longer
#: than a worker's fair share of the run (187 and 35 gradings), and its module fixtures are cheap
#: (the fork server, kept per worker; a grading of the attacks' baseline). The module's other
#: tests stay in one unit.
SPLIT = {"tests/lessons/why17/test_gpu_adversarial.py::test_each_submission_gets_what_its_manifest_says": 4,
         "tests/sandbox/test_security_attacks.py::test_attack_gains_nothing_and_honest_work_is_still_graded": 3}
#: Cases of a SPLIT test that stay with their module: the escapee's grading and the test that
#: looks for its process by name on the whole machine must not run side by side.
NOT_DEALT = ("tests/sandbox/test_security_attacks.py::test_attack_gains_nothing_and_honest_work_is_still_graded"
             "[escapee]",)
#: Long tests that use no fixture of their module: a unit each (each parameter too), in their
#: module's place, so that a module's long tests run side by side on the workers.
ALONE = ("tests/batch/test_batch_grade_all.py::test_changed_content_is_regraded_and_force_regrades_all",
         "tests/batch/test_batch_grade_all.py::"
         "test_interrupt_and_kill_lose_nothing_finished_and_a_rerun_finishes_the_rest",
         "tests/core/test_late.py::test_a_late_class_gets_each_policys_penalty_from_each_source",
         "tests/batch/test_grade_all_record.py::"
         "test_a_class_in_every_layout_graded_twice_with_a_copy_between_gives_identical_gradebooks",
         "tests/lessons/why17/test_public_tests.py::test_a_laptop_student_sees_the_gpu_mistakes_in_pytest")
#: Tests that spend most of their time waiting out time limits (the attack that never returns
#: hangs each call that reaches it until the call's limit; on the simulated GPU its sleeps are device
#: work, waited on until the call has spent the ceiling the test sets in CPU seconds): a unit each, handed out
#: first, so that the wait overlaps the other workers' work.
ALONE_FIRST = ("tests/sandbox/test_security_attacks.py::"
               "test_attack_gains_nothing_and_honest_work_is_still_graded[sleep_forever]",)


def work_units(nodeids: list[str]) -> dict[str, str]:
    """The unit of work each test goes to a worker in: its module, the Slurm modules together,
    the test alone (ALONE, ALONE_FIRST), or for a case of a SPLIT test one of its shares, dealt
    in turn."""
    units, dealt = {}, collections.Counter()
    for nodeid in nodeids:
        module, function = nodeid.split("::", 1)[0], nodeid.split("[", 1)[0]
        if nodeid in ALONE_FIRST or function in ALONE:
            units[nodeid] = nodeid
        elif module in SLURM_MODULES:
            units[nodeid] = "slurm"
        elif function in SPLIT and nodeid not in NOT_DEALT:
            units[nodeid] = f"{function}::{dealt[function] % SPLIT[function]}"
            dealt[function] += 1
        else:
            units[nodeid] = module
    return units


def _scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ModuleScheduling(LoadScopeScheduling):
        """LoadScope by work_units: by module (classes stay with their module), but SPLIT and ALONE."""

        units: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self.units is None:          # the run's collection, in order, is known by now
                self.units = work_units(self.collection)
            return self.units[nodeid]

    config.option.loadscopereorder = False     # keep the order pytest_collection_modifyitems sets
    return ModuleScheduling(config, log)


def pytest_collection_modifyitems(config, items):
    """ALONE_FIRST, then the longest modules first (a stable sort: the rest keep their order)."""
    rank = {module: i for i, module in enumerate(LONGEST_FIRST)}
    alone = ALONE_FIRST if hasattr(config, "workerinput") else ()   # under xdist only: else a module runs in two parts
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

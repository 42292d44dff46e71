"""Per-call time limits from the reference's time for the same call (autograder/sandbox/calltime.py):
a hang costs about the floor and is charged once; a call slower than the floor still gets its
multiple of the reference's time; the reference is asked only when a call passes the floor; and
course.yml's optional keys are validated. Sleeps, not spinning loops: the tests cost little CPU."""
from __future__ import annotations

import pytest
import yaml

from autograder.core import course
from autograder.core.errors import StudentMissing, StudentTimeout, UsageError
from autograder.sandbox.calltime import Deadline, ReferenceTimer
from autograder.sandbox.parent import Limits, Sandbox

LIGHT = dict(preload=(), simgpu=False)
#: The reference: the same function names, each returning at once or after a sleep.
REFERENCE = "import time\ndef quick(x):\n    return x\ndef slow(x):\n    time.sleep(1.0)\n    return x\n"


def _boxes(tmp_path, student_code: str, *, floor_s=1.0, multiple=10.0, ceiling_s=30.0):
    (tmp_path / "ref").mkdir()
    (tmp_path / "ref" / "m.py").write_text(REFERENCE)
    (tmp_path / "student").mkdir()
    (tmp_path / "student" / "m.py").write_text(student_code)
    reference = Sandbox(tmp_path / "ref", Limits(time_limit_s=60.0), label="the reference", **LIGHT)
    timer = ReferenceTimer(reference, multiple=multiple, floor_s=floor_s, ceiling_s=ceiling_s)
    student = Sandbox(tmp_path / "student", Limits(time_limit_s=ceiling_s), timer=timer, **LIGHT)
    return student, reference, timer


@pytest.mark.slow
def test_a_hang_costs_the_floor_when_the_reference_is_quick_and_is_charged_once(tmp_path):
    student, reference, timer = _boxes(tmp_path, "import time\ndef quick(x):\n    time.sleep(600)\n")
    with student, reference:
        with pytest.raises(StudentTimeout) as first:
            student.call("m", "quick", (1,))
        assert str(first.value) == ("quick did not return within 1 s (the least a call gets; "
                                    "10x the reference solution's time for the same call is less)")
        with pytest.raises(StudentTimeout) as again:      # not run again: the same reason at once
            student.call("m", "quick", (2,))
        assert again.value is first.value
        assert student.starts == 1 and len(timer.timed) == 1


@pytest.mark.slow
def test_a_call_slower_than_the_floor_gets_its_multiple_of_the_reference(tmp_path):
    student, reference, timer = _boxes(tmp_path, "import time\ndef slow(x):\n    time.sleep(2.0)\n    return x\n")
    with student, reference:
        assert student.call("m", "slow", (7,))[0] == 7    # 2 s: past the floor, within 10 x 1 s
        (key, seconds), = timer.timed.items()
        assert seconds >= 1.0 and '"function": "slow"' in key


def test_the_reference_is_not_asked_when_the_student_returns_within_the_floor(tmp_path):
    student, reference, timer = _boxes(tmp_path, "def quick(x):\n    return x + 1\n")
    with student, reference:
        assert student.call("m", "quick", (1,))[0] == 2
        assert timer.timed == {} and reference.child is None


@pytest.mark.slow
def test_the_ceiling_caps_the_limit_and_serves_calls_the_reference_cannot_answer(tmp_path):
    student, reference, timer = _boxes(tmp_path, "import time\ndef only_mine():\n    time.sleep(600)\n",
                                       floor_s=0.5, ceiling_s=1.5)
    with student, reference:
        with pytest.raises(StudentTimeout) as hung:
            student.call("m", "only_mine")
    assert str(hung.value) == ("only_mine did not return within 1.5 s (the most a call may take: the "
                               "reference solution cannot answer the same call)")
    assert timer.limit_s({"op": "call", "module": "m", "function": "only_mine", "args": (),
                          "kwargs": {}, "sim": None, "trace": False, "watch": False}) == 1.5


@pytest.mark.slow
def test_an_import_that_hangs_costs_the_floor(tmp_path):
    student, reference, _timer = _boxes(tmp_path, "import time\ntime.sleep(600)\ndef quick(x):\n    return x\n")
    with student, reference:
        with pytest.raises(StudentMissing, match=r"^m\.py did not finish importing within 1 s$"):
            student.call("m", "quick", (1,))


class _Timed(ReferenceTimer):
    """A ReferenceTimer whose reference took ``seconds`` for every request (None: cannot answer)."""

    def __init__(self, seconds, **bounds):
        super().__init__(None, **{"multiple": 10.0, "floor_s": 1.0, "ceiling_s": 30.0, **bounds})
        self.seconds = seconds

    def reference_s(self, request):
        return self.seconds


@pytest.mark.parametrize(("seconds", "limit", "bound"), [
    (0.01, 1.0, "the least a call gets; 10x the reference solution's time for the same call is less"),
    (0.5, 5.0, "10x the reference solution's time for the same call"),
    (7.0, 30.0, "the most a call may take; 10x the reference solution's time for the same call is more"),
    (None, 30.0, "the most a call may take: the reference solution cannot answer the same call"),
])
def test_a_deadline_names_the_input_that_bound_it(seconds, limit, bound):
    deadline = _Timed(seconds).deadline({"op": "has", "module": "m"})
    assert deadline == Deadline(limit, bound)
    assert deadline.message("f") == f"f did not return within {limit:g} s ({bound})"


def test_a_call_starts_with_the_floor_or_the_ceiling_when_they_meet():
    assert _Timed(None).floor() == Deadline(1.0, "the least a call gets")
    assert _Timed(None, floor_s=5.0, ceiling_s=2.0).floor() == Deadline(2.0, "the most a call may take")


def test_the_larger_deadline_wins_and_names_its_own_input():
    floor, grace = Deadline(3.0, "the floor"), Deadline(15.0, "a first call")
    assert floor.at_least(grace) is grace and grace.at_least(floor) is grace


def test_a_sandbox_without_a_timer_names_its_limit_or_the_graders(tmp_path):
    box = Sandbox(tmp_path, Limits(time_limit_s=60.0), **LIGHT)
    assert box.deadline_for() == Deadline(60.0, "the time limit of a call")
    assert box.deadline_for(2.5) == Deadline(2.5, "the limit the grader set for this call")


def _course_with(tmp_path, **keys):
    data = yaml.safe_load(course.COURSE_FILE.read_text())
    data["assignments"]["why17"].update(keys)
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data))
    return path


def test_course_time_limit_keys_are_optional_and_read():
    asg = course.load().assignment("why17")
    assert asg.time_limit_multiple >= 1 and 0 < asg.time_limit_floor_s <= asg.time_limit_s


def test_course_time_limit_keys_are_read_from_the_file(tmp_path):
    asg = course.load(_course_with(tmp_path, time_limit_multiple=4, time_limit_floor_s=0.5)).assignment("why17")
    assert (asg.time_limit_multiple, asg.time_limit_floor_s) == (4.0, 0.5)


@pytest.mark.parametrize("keys, words", [
    ({"time_limit_multiple": 0.5}, "key 'assignments.why17.time_limit_multiple' must be a number >= 1"),
    ({"time_limit_multiple": "10"}, "key 'assignments.why17.time_limit_multiple' must be a number >= 1"),
    ({"time_limit_floor_s": 0}, "key 'assignments.why17.time_limit_floor_s' must be a number > 0"),
    ({"time_limit_floor_s": True}, "key 'assignments.why17.time_limit_floor_s' must be a number > 0"),
])
def test_course_time_limit_keys_are_validated(tmp_path, keys, words):
    with pytest.raises(UsageError, match=words.replace(".", r"\.")) as info:
        course.load(_course_with(tmp_path, **keys))
    assert "\n" not in str(info.value)

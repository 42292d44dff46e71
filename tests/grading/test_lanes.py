"""Files graded side by side (autograder/grading/lanes.py, grade.run_checks): which tasks share a
lane, the shared reference's one request at a time, a lane's failure stopping the others, and the
entries and stand-in lines of every lane kept. No sandboxed child runs here but in the last test,
which grades real submissions with one lane and with two and wants the same results."""
from __future__ import annotations

import dataclasses
import threading
from types import SimpleNamespace

import pytest

from autograder.core import course, submission
from autograder.core.errors import GraderError, GradingStopped
from autograder.grading import grade, lanes
from autograder.grading.checkrun import Ran
from autograder.lessons.why17.fixtures import classes
from autograder.sandbox.parent import Limits
from autograder.sandbox.perfile import PerFileSandbox
from tests.helpers.grading_fakes import FakeContext

WAIT_S = 10.0     # how long a test waits for a thread to reach a point it must reach (never a verdict)


def _check(id, files, fn=None):
    return SimpleNamespace(id=id, files=tuple(files), fn=fn or (lambda ctx: None), name=f"checks {id}",
                           visibility=None, weight=1.0, device="cpu")


def _task(id):
    return course.Task(id=id, title=f"the {id}", points=1.0, lesson="L", functions=())


def _ids(lane):
    return [task.id for task, _cs in lane]


# ---------------------------------------------------------------- split
def test_files_no_check_shares_go_to_lanes_of_their_own():
    bw, flops, both = _task("bw"), _task("flops"), _task("both")
    tasks = [(bw, [_check("a", ["bw"]), _check("b", ["bw"])]), (flops, [_check("c", ["flops"])])]
    assert [_ids(lane) for lane in lanes.split(tasks, {}, 2)] == [["bw"], ["flops"]]
    assert [_ids(lane) for lane in lanes.split(tasks, {}, 1)] == [["bw", "flops"]]
    # a task that needs both files joins them: one lane, in run order
    joined = tasks + [(both, [_check("d", ["bw", "flops"])])]
    assert [_ids(lane) for lane in lanes.split(joined, {}, 4)] == [["bw", "flops", "both"]]


def test_a_file_a_check_needs_through_depends_joins_the_lanes():
    predict, roofline, other = _task("predict"), _task("roofline"), _task("other")
    tasks = [(predict, [_check("p", ["predict"])]), (roofline, [_check("r", ["roofline"])]),
             (other, [_check("o", ["other"])])]
    split = lanes.split(tasks, {"roofline": ("predict",)}, 3)
    assert sorted(map(_ids, split)) == [["other"], ["predict", "roofline"]]


def test_more_groups_than_lanes_are_dealt_largest_first_and_each_lane_keeps_run_order():
    t = [_task(f"t{i}") for i in range(4)]
    sizes = [1, 3, 2, 1]
    tasks = [(task, [_check(f"{task.id}.{j}", [task.id]) for j in range(n)]) for task, n in zip(t, sizes)]
    split = lanes.split(tasks, {}, 2)
    assert [_ids(lane) for lane in split] == [["t1", "t3"], ["t0", "t2"]]
    assert lanes.split([], {}, 2) == [] and lanes.count(0) == 1 and lanes.count(3) == 3
    assert 1 <= lanes.count() <= lanes.MAX_LANES


# ---------------------------------------------------------------- Serial and run
class _Box:
    """A sandbox whose ``call`` waits for ``release`` and records how many calls were inside at once."""

    def __init__(self):
        self.inside, self.most, self.entered = 0, 0, threading.Semaphore(0)
        self.release = threading.Event()
        self.limits = "the limits"

    def call(self, name):
        self.inside += 1
        self.most = max(self.most, self.inside)
        self.entered.release()
        self.release.wait(WAIT_S)
        self.inside -= 1
        return name


def test_the_shared_reference_serves_one_request_at_a_time():
    box = _Box()
    shared = lanes.Serial(box)
    got = []
    first = threading.Thread(target=lambda: got.append(shared.call("first")))
    first.start()
    assert box.entered.acquire(timeout=WAIT_S)
    second = threading.Thread(target=lambda: got.append(shared.call("second")))
    second.start()
    assert not box.entered.acquire(timeout=0.3)    # held out while the first is inside
    box.release.set()
    first.join(WAIT_S)
    second.join(WAIT_S)
    assert got == ["first", "second"] and box.most == 1
    assert shared.limits == "the limits"            # everything else passes through


def test_without_serial_the_box_would_take_both_at_once():
    """The test above can fail: the same two threads on the bare box are inside together."""
    box = _Box()
    threads = [threading.Thread(target=box.call, args=(n,)) for n in ("first", "second")]
    for t in threads:
        t.start()
    assert box.entered.acquire(timeout=WAIT_S) and box.entered.acquire(timeout=WAIT_S)
    box.release.set()
    for t in threads:
        t.join(WAIT_S)
    assert box.most == 2


def test_lanes_give_their_results_in_lane_order():
    seen = []
    out = lanes.run(["a", "b", "c"], lambda i, lane: (seen.append(threading.current_thread().name), lane * 2)[1],
                    stop=lambda: pytest.fail("nothing failed"))
    assert out == ["aa", "bb", "cc"]
    assert seen.count(threading.main_thread().name) == 1 and len(set(seen)) == 3   # the first here, the others beside


def test_a_lane_that_fails_stops_the_others_and_its_error_is_raised():
    stopped = threading.Event()

    def one(i, lane):
        if i == 1:
            raise GraderError("check x raised KeyError")
        assert stopped.wait(WAIT_S)          # lane 0 runs until the failure stops it
        return "stopped early"

    with pytest.raises(GraderError, match="check x raised"):
        lanes.run(["a", "b"], one, stop=stopped.set)
    assert stopped.is_set()


def test_the_cause_is_raised_not_what_stopping_did_to_the_first_lane():
    stopped = threading.Event()

    def one(i, lane):
        if i == 1:
            raise GraderError("check x raised KeyError")
        assert stopped.wait(WAIT_S)
        raise GradingStopped("the grading was stopped")     # its sandbox, closed, starts no child

    with pytest.raises(GraderError, match="check x raised"):
        lanes.run(["a", "b"], one, stop=stopped.set)


def test_a_failure_in_the_first_lane_stops_the_others_before_it_is_raised():
    stopped, ended = threading.Event(), []

    def one(i, lane):
        if i == 0:
            raise KeyboardInterrupt
        stopped.wait(WAIT_S)
        ended.append(stopped.is_set())
        return lane

    with pytest.raises(KeyboardInterrupt):
        lanes.run(["a", "b"], one, stop=stopped.set)
    assert ended == [True]                   # the other lane ended, and only once stopped


def test_a_closed_sandbox_starts_no_child(tmp_path):
    box = PerFileSandbox(tmp_path, Limits(time_limit_s=5.0))
    other = box.beside()
    box.close()
    for sandbox in (box, other):
        with pytest.raises(GradingStopped, match="stopped"):
            sandbox.has("bw")
    assert other.sources is box.sources and box.starts == 1


# ---------------------------------------------------------------- run_checks with lanes
def _plan(tmp_path, checks, *, early=(), needs=None, lanes=2):
    folder = tmp_path / "submission"
    folder.mkdir(exist_ok=True)
    sub = submission.Submission(folder=folder, files=("a.py",), seed=7, origin="made up", _tmp=tmp_path)
    asg = SimpleNamespace(name="made_up", grader="autograder.lessons.why17", visibility="visible")
    order = [tc for tc in checks if tc[0].id in early] + [tc for tc in checks if tc[0].id not in early]
    return grade.GradingPlan(
        assignment=asg, device="sim", limits=Limits(time_limit_s=30.0), fixed_limit=False, budget_s=60.0,
        started=0.0, submission=sub, checks=checks, order=order, early=set(early),
        shares={c.id: 1.0 for _t, cs in checks for c in cs}, needs=needs or {}, torch_files=frozenset(),
        plot_files=frozenset(), only=None, lanes=lanes)


def test_every_lane_keeps_its_entries_and_its_stand_in_lines(tmp_path):
    where = {}

    def record(name):
        def fn(ctx):
            where[name] = ctx.student
            return f"{name} ok"
        return fn

    t = {i: _task(i) for i in ("predict", "roofline", "bw", "flops")}
    checks = [(t["predict"], [_check("p", ["predict"], record("p"))]),
              (t["bw"], [_check("b1", ["bw"], record("b1")), _check("b2", ["bw"], record("b2"))]),
              (t["flops"], [_check("f", ["flops"], record("f"))]),
              (t["roofline"], [_check("r", ["roofline"], record("r"))])]
    # roofline needs predict, which is not handed in: its stand-in's line goes with every check of it
    p = _plan(tmp_path, checks, early={"predict"}, needs={"roofline": ("predict",)})
    made = []

    def more():
        made.append(SimpleNamespace(sources={}, close=lambda: None))
        return made[-1]

    main = SimpleNamespace(sources={}, starts=0, start=lambda: None, close=lambda: None)
    tests, notes = grade.run_checks(p, FakeContext(p.submission.folder), main, main, more=more)
    assert sorted(t["check"] for t in tests) == ["b1", "b2", "f", "p", "r"]
    assert len(made) == 1 and {where["b1"], where["b2"]} == {None} and where["f"] is where["r"] is made[0]
    assert len(notes) == 1 and "stand-in predict.py" in notes[0]
    assert [t["check"] for t in tests if notes[0] in t["output"]] == ["r"]
    one_lane, _notes = grade.run_checks(dataclasses.replace(p, lanes=1), FakeContext(p.submission.folder), main, main,
                                        more=more)
    assert len(made) == 1 and [t["check"] for t in one_lane] == ["p", "b1", "b2", "f", "r"]   # run order


def test_lanes_added_back_keep_what_each_added():
    done = Ran()
    done.tests, done.notes = [{"check": "early"}], ["early note"]
    a, b = done.copy(), done.copy()
    a.tests.append({"check": "a"})
    b.tests.append({"check": "b"})
    b.notes.append("b note")
    done.add(a)
    done.add(b)
    assert [t["check"] for t in done.tests] == ["early", "a", "b"] and done.notes == ["early note", "b note"]


# ---------------------------------------------------------------- real gradings, one lane and two
@pytest.mark.slow
@pytest.mark.parametrize("kind", ["reference_folder", "no_sync", "crash", "stubs"])
def test_two_lanes_grade_as_one_does(kind, tmp_path):
    """The same checks, statuses, scores and lines whether bw.py and flops.py are graded one after
    the other or side by side (a crash of bw.py at import included)."""
    path = classes.write_student(tmp_path, "student", kind)
    one = grade.grade_submission(path, lanes=1)
    two = grade.grade_submission(path, lanes=2)
    assert [(t["check"], t["status"], t["score"], t["output"]) for t in two["tests"]] == \
        [(t["check"], t["status"], t["score"], t["output"]) for t in one["tests"]]
    assert two["output"] == one["output"]

"""grade_submission's steps one at a time (autograder/grading/grade.py): the plan of a grading, its
sandboxes before any child starts, the checks' entries in run order with stand-ins and budget,
and the results put back in course.yml order. No sandboxed child runs here: the tiny course is
planned for real, the rest is made-up plans, checks and contexts."""
from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import pytest

from autograder.core import course, lesson, submission
from autograder.core.errors import StudentRaised, UsageError
from autograder.core.registry import CPU, SIMULATED_GPU, CheckFailed
from autograder.grading import budget, checkrun, fallback, grade, lanes, schedule
from autograder.grading import reference as kept_reference
from autograder.grading.simseed import Secret
from autograder.sandbox import calltime, forkserver, isolation, policy
from autograder.sandbox.parent import Limits
from autograder.sandbox.perfile import PerFileSandbox
from tests.helpers.grading_fakes import FakeContext
from tests.helpers.paths import ROOT
from tests.helpers.tiny_course import TINY

TINY_YML = TINY / "course.yml"
GOOD_ADDS = TINY / "submissions" / "good_adds"


@pytest.fixture
def no_server(monkeypatch) -> list[str]:
    """Each fork server start ``plan`` asks for, recorded instead of started."""
    asked: list[str] = []
    monkeypatch.setattr(forkserver, "ensure", lambda **imports: asked.append("ensure"))
    return asked


@pytest.fixture
def nothing_kept():
    kept_reference.close_all()
    yield
    kept_reference.close_all()


# ---------------------------------------------------------------- plan: the tiny course for real
def test_the_plan_of_the_tiny_course(no_server):
    p = grade.plan(GOOD_ADDS, "tiny", course_file=TINY_YML)
    try:
        assert p.assignment.name == "tiny"
        assert p.device == "cpu" and p.assignment.root == TINY
        assert p.limits == Limits(time_limit_s=30.0, memory_limit_mb=2048,
                                  hide=policy.course_secrets(TINY)) and not p.fixed_limit
        assert p.budget_s == max(budget.CALLS * 30.0, budget.MIN_S)
        assert [(task.id, [c.id for c in cs]) for task, cs in p.checks] == [("double", ["doubles_like_reference"])]
        assert p.order == p.checks and p.early == {"double"}        # no torch anywhere: it runs early
        assert p.shares == {"doubles_like_reference": 10.0} and p.needs == {}
        assert p.torch_files == frozenset() and p.plot_files == frozenset() and p.only is None
        assert (p.gpu, p.light) == (False, False)
        assert (p.submission.folder / "double.py").read_text() == (GOOD_ADDS / "double.py").read_text()
        assert no_server == ["ensure"]        # started while the checks load, once
    finally:
        p.submission.cleanup()
    assert not p.submission.folder.exists()


def test_a_fixed_time_limit_and_the_budget(no_server):
    for kwargs, fixed, limit, seconds in [({"time_limit_s": 5}, True, 5.0, budget.MIN_S),
                                          ({"time_limit_s": 20, "budget_s": 12}, True, 20.0, 12.0),
                                          ({"budget_s": 0}, False, 30.0, 0.0)]:
        p = grade.plan(GOOD_ADDS, "tiny", course_file=TINY_YML, **kwargs)
        p.submission.cleanup()
        assert (p.fixed_limit, p.limits.time_limit_s, p.budget_s) == (fixed, limit, seconds), kwargs


def test_a_wrong_device_is_refused_before_the_submission_is_copied(no_server, monkeypatch):
    monkeypatch.setattr(submission, "load", lambda *a, **k: pytest.fail("copied"))
    with pytest.raises(UsageError, match="unknown device 'tpu'; expected one of: sim, cpu, cuda"):
        grade.plan(GOOD_ADDS, "tiny", "tpu", course_file=TINY_YML)
    assert no_server == []


def test_a_plan_that_fails_after_the_copy_removes_it(no_server, monkeypatch):
    copies = []
    load = submission.load
    monkeypatch.setattr(submission, "load", lambda *a, **k: copies.append(load(*a, **k)) or copies[-1])

    def checks_for(asg, only=None):
        raise UsageError("two modules register one check id")
    monkeypatch.setattr(grade, "checks_for", checks_for)
    with pytest.raises(UsageError, match="two modules"):
        grade.plan(GOOD_ADDS, "tiny", course_file=TINY_YML)
    assert len(copies) == 1 and not copies[0].folder.exists()


def test_the_why17_plan_moves_the_torch_free_tasks_first_and_lightens_partial_gradings(no_server):
    p = grade.plan(ROOT / "solutions" / "why17")
    p.submission.cleanup()
    assert [task.id for task, _ in p.order] == ["task3", "task4", "task5", "task1", "task2"]
    assert p.early == {"task3", "task4", "task5"} and p.needs == {"roofline": ("predict",)}
    assert p.gpu and not p.light
    assert sum(p.shares.values()) == pytest.approx(sum(t.points for t, cs in p.checks if cs))
    predict_only = {c.id for task, cs in p.checks if task.id == "task3" for c in cs}
    light = grade.plan(ROOT / "solutions" / "why17", only=predict_only)
    light.submission.cleanup()
    assert light.light and not light.gpu and set(light.shares) == set(p.shares)   # points of all checks
    gpu_one = next(c.id for _t, cs in p.checks for c in cs if schedule.on_gpu(c))
    heavy = grade.plan(ROOT / "solutions" / "why17", only={gpu_one})
    heavy.submission.cleanup()
    assert heavy.gpu and not heavy.light


def test_the_fork_server_imports_only_what_the_checks_asked_for_need():
    asg = course.load().assignment("why17")
    every = lesson.server_imports(asg)
    checks = {c.id: c for _t, cs in grade.checks_for(asg) for c in cs}

    def imports(*ids):
        return schedule.server_imports(asg, grade.checks_for(asg, set(ids)) if ids else None)

    plot_check = next(i for i, c in checks.items() if "roofline" in c.files)
    gpu_check = next(i for i, c in checks.items() if schedule.on_gpu(c))
    assert imports() == every and every["preload"] and every["later"]   # every check: all of it
    assert imports("measure_file") == {"preload": (), "later": ()}     # no child at all
    assert imports(plot_check) == {"preload": (), "later": every["later"]}
    assert imports(gpu_check) == {"preload": every["preload"], "later": ()}
    assert imports(gpu_check, plot_check) == every


def test_a_server_started_for_torch_free_checks_is_replaced_when_torch_is_needed(nothing_kept):
    asg = course.load().assignment("why17")
    forkserver.stop()
    light = forkserver.start(preload=(), later=(), wait=False)
    try:
        grade.fork_server(asg, grade.checks_for(asg, {"measure_file"}))
        assert forkserver.active() is light                      # it covers what these need
        grade.fork_server(asg, None)
        heavy = forkserver.active()
        assert heavy is not light and not light.alive() and heavy.covers(("torch",))
        grade.fork_server(asg, grade.checks_for(asg, {"measure_file"}))
        assert forkserver.active() is heavy                      # a wider one serves a lighter grading
    finally:
        forkserver.stop()


# ---------------------------------------------------------------- made-up plans
def _check(id, files, *, fn=None, device=CPU, weight=1.0):
    fn = fn or (lambda ctx: None)
    return SimpleNamespace(id=id, files=tuple(files), fn=fn, name=f"checks {id}", visibility=None, weight=weight,
                           device=device)


def _task(id, points=1.0):
    return course.Task(id=id, title=f"the {id}", points=points, lesson="L", functions=())


def _plan(tmp_path, checks, *, order=None, early=(), needs=None, only=None, grader="x", device="sim",
          budget_s=60.0) -> grade.GradingPlan:
    folder = tmp_path / "submission"
    folder.mkdir(exist_ok=True)
    sub = submission.Submission(folder=folder, files=("a.py",), seed=7, origin="made up", _tmp=tmp_path)
    asg = SimpleNamespace(name="made_up", grader=grader, visibility="visible", sim_profile="h100-sxm")
    return grade.GradingPlan(
        assignment=asg, device=device, limits=Limits(time_limit_s=30.0), fixed_limit=False,
        budget_s=budget_s, started=0.0, submission=sub, checks=checks, order=order or checks,
        early=set(early), shares={c.id: 2.0 for _t, cs in checks for c in cs}, needs=needs or {},
        torch_files=frozenset({"bw"}), plot_files=frozenset(), only=only)


def test_what_a_made_up_plan_says_of_itself(tmp_path):
    t1, t2, t3 = _task("t1"), _task("t2"), _task("t3")
    checks = [(t1, [_check("gpu_bw", ["bw"], device=SIMULATED_GPU)]), (t2, [_check("calc", ["calc"])]),
              (t3, [])]
    order, early = schedule.run_order(checks, {"bw"}, {})
    assert [t.id for t, _ in order] == ["t2", "t1", "t3"] and early == {"t2"}
    p = _plan(tmp_path, checks, order=order, early=early)
    assert p.gpu and not p.light          # all checks: never light
    calc_only = _plan(tmp_path, [(t2, checks[1][1])], only={"calc"})
    assert calc_only.light and not calc_only.gpu
    assert not _plan(tmp_path, [(t1, [_check("bw_cpu", ["bw"])])], only={"bw_cpu"}).light   # needs torch


class FakeReference:
    def __init__(self):
        self.starts = 0

    def start(self):
        self.starts += 1


def _raises(exc):
    def fn(ctx):
        raise exc
    return fn


def test_run_checks_gives_each_check_its_entry_in_run_order(tmp_path):
    t1, t2 = _task("t1"), _task("t2")
    checks = [(t1, [_check("gpu_a", ["bw"], device=SIMULATED_GPU),
                    _check("missing_json", ["results.json"])]),
              (t2, [_check("ok", ["calc"], fn=lambda ctx: "fine"),
                    _check("wrong", ["calc"], fn=_raises(CheckFailed("2x too slow"))),
                    _check("crashed", ["calc"], fn=_raises(StudentRaised("ValueError", "bad")))])]
    order = [checks[1], checks[0]]
    p = _plan(tmp_path, checks, order=order, early={"t2"})
    reference = FakeReference()
    tests, notes = grade.run_checks(p, FakeContext(p.submission.folder), SimpleNamespace(sources={}), reference)
    assert [(t["check"], t["outcome"], t["score"], t["output"]) for t in tests] == [
        ("ok", "passed", 2.0, "fine"), ("wrong", "failed", 0.0, "2x too slow"),
        ("crashed", "error", 0.0, "your code raised ValueError: bad"),
        ("gpu_a", "passed", 2.0, "passed"), ("missing_json", "error", 0.0, "the submission has no results.json")]
    assert notes == [] and reference.starts == 1        # started once, for the first task not moved first
    assert tests[0]["name"] == "t2 checks ok [ok]" and tests[0]["visibility"] == "visible"


def test_a_spent_budget_fails_every_check_left_as_not_run(tmp_path):
    t1 = _task("t1")
    p = _plan(tmp_path, [(t1, [_check("ok", ["calc"], fn=lambda ctx: pytest.fail("ran"))])], budget_s=12)
    tests, _ = grade.run_checks(p, FakeContext(p.submission.folder, deadline=0.0), SimpleNamespace(sources={}),
                                FakeReference())
    assert [(t["outcome"], t["output"]) for t in tests] == [("error", checkrun.over_budget(12))]
    assert "whole budget of 12 s" in tests[0]["output"]


def test_a_module_that_needs_a_missing_one_runs_with_its_stand_in(tmp_path):
    t3, t4 = _task("task3"), _task("task4")
    checks = [(t3, [_check("predict_ok", ["predict"])]), (t4, [_check("plot_ok", ["roofline"])])]
    p = _plan(tmp_path, checks, needs={"roofline": ("predict",)}, grader="autograder.lessons.why17")
    student = SimpleNamespace(sources={})
    tests, notes = grade.run_checks(p, FakeContext(p.submission.folder), student, FakeReference())
    line = fallback.note("roofline", "predict", "you submitted no predict.py")
    assert notes == [line] and tests[1]["output"] == f"passed\n{line}" and tests[0]["output"] == "passed"
    assert (student.sources["roofline"] / "predict.py").read_text() == \
        lesson.load("autograder.lessons.why17").stand_in("predict").read_text()
    assert student.sources["roofline"].parent == tmp_path               # beside the copy, removed with it


# ---------------------------------------------------------------- open_sandboxes and finish
def test_the_sandboxes_of_a_plan_start_no_child(no_server, nothing_kept):
    p = grade.plan(GOOD_ADDS, "tiny", course_file=TINY_YML)
    fixed = dataclasses.replace(p, fixed_limit=True)
    try:
        with grade.open_sandboxes(p) as (student, reference):
            assert isinstance(student, PerFileSandbox) and student.limits == p.limits
            assert student.source == p.submission.folder and student.current is None
            assert reference.limits.time_limit_s == 30.0 * grade.REFERENCE_TIME_FACTOR and reference.child is None
            assert reference.source == p.assignment.solutions_dir
            timer = student.options["timer"]
            assert isinstance(timer, calltime.ReferenceTimer) and timer.ceiling_s == 30.0
            assert student.options["preload"] == ("torch",) and student.options["simgpu"]
        assert isinstance(reference, lanes.Serial)       # the lanes share it, one request at a time
        assert kept_reference.sandbox(p.assignment.solutions_dir, reference.limits) is reference.box   # kept
        with grade.open_sandboxes(fixed) as (student, _reference):
            assert student.options["timer"] is None
    finally:
        p.submission.cleanup()


def test_finish_puts_results_back_in_course_order_with_the_notes(tmp_path, monkeypatch):
    monkeypatch.setattr(isolation, "describe", lambda limits: "PROTECTION")
    t1, t2, t3 = _task("t1"), _task("t2", points=3), _task("t3")
    checks = [(t1, [_check("gpu_a", ["bw"], device=SIMULATED_GPU)]), (t2, []), (t3, [_check("c", ["calc"])])]
    p = _plan(tmp_path, checks)
    ran = [{"check": "c"}, {"check": "gpu_a"}]
    tests, output = grade.finish(p, ran, ["a stand-in line"], SimpleNamespace(limits=p.limits, starts=3),
                                 Secret("s", "environment"))
    assert [t["check"] for t in tests] == ["gpu_a", "c"]
    assert output.splitlines() == [
        "Graded with --device sim: CPU checks on the grading machine's CPU; GPU sanity checks on the "
        "simulated GPU (profile h100-sxm).", "Files graded: a.py.", "PROTECTION",
        "Your code was restarted 2 time(s) after a crash or a time limit.",
        "t2 (the t2): no checks are registered yet; its 3 points are not graded", "a stand-in line",
        "The simulated GPU's profile was seeded with the grader's secret (environment)."]
    partial = dataclasses.replace(p, checks=[checks[2]], only={"c"})
    _tests, output = grade.finish(partial, [{"check": "c"}], [], SimpleNamespace(limits=p.limits, starts=1),
                                  Secret("s", "environment"))
    assert output.splitlines()[3:] == []      # no GPU check, no empty task named, no restart

"""Points per check come from course.yml: each task's ``checks`` mapping, validated on load to sum
to the task's points, and checked at grading against the registered checks (none unpaid, none
unknown)."""
from __future__ import annotations

import copy

import pytest
import yaml

from autograder.core import course, points
from autograder.core.errors import UsageError
from autograder.grading.grade import checks_for, grade_submission
from autograder.lessons.why17.fixtures import build

RAW = yaml.safe_load(course.COURSE_FILE.read_text(encoding="utf-8"))


def _course(tmp_path, edit) -> str:
    data = copy.deepcopy(RAW)
    edit(data["assignments"]["why17"]["tasks"])
    path = tmp_path / "course.yml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return str(path)


CASES = [
    (lambda t: t[0]["checks"].update(bw_rejects_bad=2),
     "the points of 'assignments.why17.tasks[0].checks' sum to 32, but the task's points are 31"),
    (lambda t: t[2]["checks"].update(kv_bytes_gqa="4"),
     "key 'assignments.why17.tasks[2].checks.kv_bytes_gqa' must be a number"),
    (lambda t: t[3]["checks"].update(roofline_loglog=-4),
     "key 'assignments.why17.tasks[3].checks.roofline_loglog' must be positive"),
    (lambda t: t[4].update(checks={}), "key 'assignments.why17.tasks[4].checks' must be a mapping"),
    (lambda t: t[4].update(checks=["measure_file"]), "key 'assignments.why17.tasks[4].checks' must be a mapping"),
]


@pytest.mark.parametrize("edit, words", CASES, ids=[w for _e, w in CASES])
def test_check_points_that_do_not_add_up_are_refused_on_load(tmp_path, edit, words):
    path = _course(tmp_path, edit)
    with pytest.raises(UsageError) as info:
        course.load(path)
    assert words in str(info.value) and path in str(info.value) and "\n" not in str(info.value)


def test_every_registered_check_has_its_points_and_they_add_up_to_100():
    asg = course.load().assignment("why17")
    shares = points.of_checks(asg, checks_for(asg))
    assert set(shares) == {c.id for _task, cs in checks_for(asg) for c in cs}
    assert sum(shares.values()) == pytest.approx(100)
    for task, checks in checks_for(asg):
        assert sum(shares[c.id] for c in checks) == pytest.approx(task.points), task.id


#: The lesson's headline mistakes, each with the checks that catch it (together they cost >= 4).
HEADLINE = {
    "bytes counted once": ["bytes_counted_twice"],
    "synchronize missing": ["sync_present"],
    "synchronize missing in matmul_tflops": ["sync_present.matmul_tflops"],
    "buffer in cache": ["buffer_exceeds_cache"],
    "no warm-up": ["warmup_present"],
    "no warm-up in matmul_tflops": ["warmup_present.matmul_tflops"],
    "2n^3": ["flops_counted_2n3"],
    "GB vs GiB": ["units_gb_per_s"],
    "the 1e9": ["decode_moe_active", "decode_quantized", "law_batch1_is_predict"],
    "K and V x2": ["kv_bytes_gqa"],
    "weights read once per step": ["ceiling_batch_shares_weights"],
    "min not max": ["attainable_two_roofs", "law_roofline_min", "law_ridge_meets"],
    "log-log axes": ["roofline_loglog"],
}


@pytest.mark.parametrize("mistake", sorted(HEADLINE))
def test_a_headline_mistake_is_worth_at_least_4_points(mistake):
    asg = course.load().assignment("why17")
    shares = points.of_checks(asg, checks_for(asg))
    assert sum(shares[c] for c in HEADLINE[mistake]) >= 4


def test_an_input_check_is_worth_at_most_1_point():
    asg = course.load().assignment("why17")
    shares = points.of_checks(asg, checks_for(asg))
    validation = [c for c in shares if c.startswith("errors_") or c.endswith("_rejects_bad")]
    assert len(validation) == 9 and max(shares[c] for c in validation) <= 1


def test_a_check_course_yml_does_not_know_or_does_not_pay_is_refused_at_grading(tmp_path):
    def rename(tasks):
        tasks[3]["checks"]["roofline_log_log"] = tasks[3]["checks"].pop("roofline_loglog")
    path = _course(tmp_path, rename)
    folder = build.overlay("good", "pyplot_roofline", tmp_path / "s")
    with pytest.raises(UsageError) as info:
        grade_submission(folder, device="cpu", course_file=path, only={"roofline_loglog"})
    assert "roofline_log_log, not a check of task4" in str(info.value) and "\n" not in str(info.value)
    real = course.load().assignment("why17")
    plan = checks_for(real)
    plan[3] = (plan[3][0], plan[3][1] + [_fake("extra_check")])     # a check registered, not in course.yml
    with pytest.raises(UsageError, match="gives no points to extra_check; give every check of task4 its points"):
        points.of_checks(real, plan)


def _fake(check_id):
    from autograder.core.registry import Check

    return Check(id=check_id, task="task4", name="x", files=("roofline",), fn=lambda ctx: None)


@pytest.mark.slow
def test_scores_are_the_course_yml_points(tmp_path):
    folder = build.overlay("wrong", "roofline_linear_axes", tmp_path / "s")
    results = grade_submission(folder, device="cpu", only={"roofline_loglog", "roofline_axis_labels"})
    by_check = {t["check"]: (t["score"], t["max_score"]) for t in results["tests"]}
    assert by_check == {"roofline_loglog": (0.0, 4.0), "roofline_axis_labels": (1.0, 1.0)}

"""A class a TA graded by hand, rebuilt: nine students, each the reference with one different slip
(autograder/lessons/why17/fixtures/class/<slip>/mistake.yml). Their grades are ones a TA would
sign: each headline mistake of the lesson costs at least 4 points of 100, a missing input check
at most 1; the batching slip is named as such; a broken predict.py costs task3 only; and a
submission zipped one level too deep grades as if it were not.

Each student is graded on every check its changed file can reach (the GPU checks included): the
other files are the reference's and pass, so the points lost are the points the slip costs.
"""
from __future__ import annotations

import zipfile

import pytest

from autograder.grading.grade import grade_submission, load_checks
from autograder.lessons.why17 import LESSON
from autograder.lessons.why17.fixtures import build
from shared import diagnose

CLASS = sorted(p.name for p in (build.HERE / "class").iterdir() if p.is_dir())
#: Slip -> (least points it must cost, most, the check whose message must name it).
COST = {
    "bytes_once": (4, 100, "bytes_counted_twice"),
    "no_sync": (4, 100, "sync_present"),
    "no_warmup": (4, 100, "warmup_present"),
    "forgot_1e9": (4, 100, "decode_quantized"),
    "kv_not_doubled": (4, 100, "kv_bytes_gqa"),
    "rereads_weights": (4, 100, "ceiling_batch_shares_weights"),
    "roofline_max": (4, 100, "attainable_two_roofs"),
    "linear_axes": (4, 100, "roofline_loglog"),
    "missing_valueerror": (0.01, 1, "errors_prefill_seconds"),
}
#: Words the named check's message must carry: the slip in the lesson's words.
WORDS = {
    "bytes_once": "you counted the bytes once",
    "no_sync": "Synchronize before reading the clock",
    "no_warmup": "Run a few untimed iterations first",
    "forgot_1e9": "ratio 1e-09: the 1e9 left out: the bandwidth stayed in GB/s",
    "kv_not_doubled": diagnose.KV_WITHOUT_2,
    "rereads_weights": diagnose.REREAD_WEIGHTS,
    "roofline_max": diagnose.MAX_FOR_MIN,
    "linear_axes": "log-log",
    "missing_valueerror": "instead of raising ValueError",
}


def reachable(modules: set[str]) -> set[str]:
    """Every registered check (GPU checks too) that needs one of ``modules`` or a module importing one."""
    reach = set(modules)
    for module in modules:
        reach |= build.IMPORTERS.get(module, set())
    return {cid for cid, c in load_checks(LESSON).items() if reach & set(c.files)}


def lost(results: dict) -> float:
    return round(sum(t["max_score"] - t["score"] for t in results["tests"]), 4)


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> dict[str, dict]:
    out = {}
    for name in CLASS:
        folder = build.overlay("class", name, tmp_path_factory.mktemp(name) / "why17")
        out[name] = grade_submission(folder, device="sim", only=reachable(build.changed_modules("class", name)))
    return out


def test_the_class_has_nine_students_each_with_a_different_slip():
    assert CLASS == sorted(COST) and len(CLASS) == 9


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(COST))
def test_each_slip_costs_what_the_lesson_says_it_weighs(graded, name):
    least, most, named = COST[name]
    results = graded[name]
    assert least <= lost(results) <= most, (name, lost(results), build.failed(results))
    assert named in build.failed(results)
    assert WORDS[name] in build.outputs(results)[named], build.outputs(results)[named]


@pytest.mark.slow
def test_a_headline_slip_always_costs_more_than_a_missing_input_check(graded):
    validation = lost(graded["missing_valueerror"])
    assert all(lost(graded[n]) > 4 * validation for n in CLASS if n != "missing_valueerror")


@pytest.mark.slow
def test_a_wrong_predict_is_charged_in_task3_only(graded):
    for name in ("forgot_1e9", "kv_not_doubled", "rereads_weights", "roofline_max", "missing_valueerror"):
        assert {t["task"] for t in graded[name]["tests"] if t["status"] == "failed"} == {"task3"}, name


def test_a_broken_predict_costs_task3_only(tmp_path):
    folder = build.overlay("hostile", "syntax_error_predict", tmp_path / "why17")
    results = grade_submission(folder, device="cpu", only=reachable({"predict"}))
    failed = {t["task"] for t in results["tests"] if t["status"] == "failed"}
    task3 = [t for t in results["tests"] if t["task"] == "task3"]
    assert failed == {"task3"} and all(t["status"] == "failed" for t in task3)
    assert all(t["status"] == "passed" for t in results["tests"] if t["task"] == "task4")
    assert "graded with a stand-in predict.py" in results["output"]


@pytest.mark.slow
def test_a_submission_zipped_one_level_too_deep_grades_as_if_it_were_not(graded, tmp_path):
    name = "rereads_weights"
    folder = build.overlay("class", name, tmp_path / "src")
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("why17-bundle/README.md", "# the bundle\n")
        zf.writestr("why17-bundle/shared/tables.py", "x = 1\n")
        for path in folder.iterdir():
            zf.write(path, f"why17-bundle/assignments/why17/{path.name}")
        zf.writestr("why17-bundle/assignments/why17/.hypothesis/examples/x", "cache")
        zf.writestr("__MACOSX/why17-bundle/._README.md", "junk")
    results = grade_submission(archive, device="sim", only=reachable(build.changed_modules("class", name)))
    strip = [{k: t[k] for k in ("check", "score", "max_score", "status", "output")} for t in results["tests"]]
    want = [{k: t[k] for k in ("check", "score", "max_score", "status", "output")} for t in graded[name]["tests"]]
    assert strip == want
    assert "found in why17-bundle/assignments/why17/" in results["output"]
    assert ".hypothesis" not in results["output"] and "README.md" not in results["output"]

"""Task 5: measurements.json, graded by the real grader; each hand-broken table fails exactly its check."""
from __future__ import annotations

import json

import pytest

from autograder.grading.grade import grade_submission
from autograder.lessons.why17 import measurements
from tests.helpers.paths import ROOT

CASES = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements"
IDS = {"measure_file", "measure_ceiling_own_bw", "measure_pct_of_ceiling", "measure_not_above_ceiling",
       "measure_bw_plausible", "measure_ridge_point"}


def grade(case: str) -> dict:
    """check id -> (passed, message) of the task5 checks on autograder/lessons/why17/fixtures/measurements/<case>."""
    res = grade_submission(CASES / case, only=IDS)
    return {t["check"]: (t["status"] == "passed", t["output"]) for t in res["tests"]}


@pytest.mark.parametrize("case", ["reference", "reference_cpu_whole_checkpoint"])
def test_correct_tables_pass_every_check(case):
    verdicts = grade(case)
    assert set(verdicts) == IDS
    assert all(passed for passed, _ in verdicts.values()), verdicts


@pytest.mark.parametrize("case, check, words", [
    ("ceiling_from_spec", "measure_ceiling_own_bw", "spec sheet's 3350 GB/s"),
    ("pct_inverted", "measure_pct_of_ceiling", "inverted"),
    ("measured_above_ceiling", "measure_not_above_ceiling", "1.50x its ceiling"),
    ("bw_above_spec", "measure_bw_plausible", "never legitimate"),
    ("bw_far_below_spec", "measure_bw_plausible", "implausibly far below"),
    ("ridge_wrong", "measure_ridge_point", "ridge point is peak"),
])
def test_each_broken_table_fails_exactly_its_check(case, check, words):
    verdicts = grade(case)
    failed = {cid for cid, (passed, _) in verdicts.items() if not passed}
    assert failed == {check}, verdicts
    message = verdicts[check][1]
    assert words in message
    assert "\n" not in message and "Reread" in message


def test_above_ceiling_speaks_the_lessons_words():
    _, message = grade("measured_above_ceiling")["measure_not_above_ceiling"]
    assert "When a measurement exceeds a ceiling, the ceiling is wrong; go find the factor of two" in message


@pytest.mark.parametrize("case, words", [("missing", "measurements.json is missing"),
                                         ("malformed", "not valid JSON (line")])
def test_missing_or_malformed_file_zeroes_task5_only(case, words):
    res = grade_submission(CASES / case, only=IDS | {"errors_predict_decode"})
    task5 = [t for t in res["tests"] if t["task"] == "task5"]
    assert {t["check"] for t in task5} == IDS
    assert all(t["score"] == 0 and words in t["output"] for t in task5)
    others = [t for t in res["tests"] if t["task"] != "task5"]
    assert others and all("measurements.json" not in t["output"] for t in others)


def reference() -> dict:
    return json.loads((CASES / "reference" / "measurements.json").read_text())


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d.update(bw_gbs=float("nan")), "NaN is not a measurement"),
    (lambda d: d.update(bw_gbs=-3.0), "'bw_gbs' must be a positive number in GB/s"),
    (lambda d: d.update(bw_gbs="2950"), "'bw_gbs' must be a positive number"),
    (lambda d: d.update(schema="v0"), "'schema' must be 'why17-measurements/2' (or the older 'why17-measurements/1')"),
    (lambda d: d.update(extra=1), "unknown key 'extra'"),
    (lambda d: d.pop("rows"), "missing 'rows'"),
    (lambda d: d.update(rows=[]), "'rows' must be a list of 1 to"),
    (lambda d: d["rows"][1].pop("measured_tok_s"), "rows[1] is missing 'measured_tok_s'"),
    (lambda d: d["rows"][0].update(pct_of_ceiling=True), "'rows[0].pct_of_ceiling' must be a positive number"),
    (lambda d: d.update(sweep_gbs_by_mib={"8MB": 1.0}), "keys are buffer sizes in MiB"),
    (lambda d: d["device"].update(type="tpu"), "'device.type' must be one of cuda, cpu"),
])
def test_schema_errors_name_the_field(mutate, words):
    data = reference()
    mutate(data)
    with pytest.raises(measurements.MeasurementsError) as info:
        measurements.parse(json.dumps(data))
    assert words in str(info.value)
    assert "\n" not in str(info.value)


def test_parse_refuses_what_is_not_a_small_json_table():
    with pytest.raises(measurements.MeasurementsError, match="larger than"):
        measurements.parse(b" " * (measurements.MAX_BYTES + 1))
    with pytest.raises(measurements.MeasurementsError, match="not UTF-8"):
        measurements.parse(b"\xff\xfe{}")
    with pytest.raises(measurements.MeasurementsError, match="must be a JSON object"):
        measurements.parse("[1, 2]")


def test_parse_reads_the_reference_with_units():
    table = measurements.parse((CASES / "reference" / "measurements.json").read_bytes())
    assert table.device_key == "h100-sxm" and table.bw_gbs == 2950.0
    assert [r.model for r in table.rows] == ["llama-3.2-1b", "llama-3.2-3b", "llama-3.1-8b"]
    assert table.sweep_gbs_by_mib[8] == 7900.0


def test_unknown_device_key_is_named(tmp_path):
    data = reference()
    data["device"]["key"] = "h900"
    (tmp_path / "measurements.json").write_text(json.dumps(data))
    res = grade_submission(tmp_path, only={"measure_bw_plausible"})
    (test,) = res["tests"]
    assert test["status"] == "failed" and "'h900' is not in the hardware tables" in test["output"]


def test_unknown_model_is_named(tmp_path):
    data = reference()
    data["rows"][0]["model"] = "gpt-5"
    (tmp_path / "measurements.json").write_text(json.dumps(data))
    res = grade_submission(tmp_path, only={"measure_ceiling_own_bw"})
    (test,) = res["tests"]
    assert test["status"] == "failed" and "unknown model 'gpt-5'" in test["output"]


@pytest.mark.parametrize("case, words", [("simulated_run", "'device.simulated': true"),
                                         ("simulated_by_name", "'NVIDIA H100 SXM (simulated)' is the simulated GPU")])
def test_a_simulated_run_fails_every_check_of_its_numbers(case, words):
    """A Measure table from the simulated GPU is read, but its numbers are the simulator's: each check
    that judges them fails saying so, whether the notebook recorded it or only the name shows it."""
    verdicts = grade(case)
    assert verdicts["measure_file"][0] and "simulated run" in verdicts["measure_file"][1]
    judged = IDS - {"measure_file"}
    for check in judged:
        passed, message = verdicts[check]
        assert not passed, (check, message)
        assert words in message and "your own CPU or GPU" in message and "\n" not in message


def test_the_simulated_field_is_a_boolean():
    data = reference()
    data["schema"] = "why17-measurements/2"
    data["device"]["simulated"] = "no"
    with pytest.raises(measurements.MeasurementsError, match="'device.simulated' must be true or false"):
        measurements.parse(json.dumps(data))
    data["device"]["simulated"] = False
    assert not measurements.parse(json.dumps(data)).simulated


def test_a_device_without_a_spec_is_not_checked_here_not_passed():
    """A CPU has no spec sheet to compare its bandwidth with: the check says it judged nothing."""
    _, message = grade("reference_cpu_whole_checkpoint")["measure_bw_plausible"]
    assert message.startswith("not checked here:") and "no spec sheet" in message

"""measurements.json version 2: repeats with their spread and the machine's cache and threads, as
optional keys; version 1 files still read, and every wrong new field is named in one line."""
from __future__ import annotations

import json

import pytest

from autograder.grading.grade import grade_submission
from autograder.lessons.why17 import measurements, plotdata
from tests.helpers.paths import ROOT

CASES = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements"
TASK5 = {"measure_file", "measure_ceiling_own_bw", "measure_pct_of_ceiling", "measure_not_above_ceiling",
         "measure_bw_plausible", "measure_ridge_point"}


def version2() -> dict:
    """The CPU reference table with runs, cache and threads: the shape the notebook writes."""
    data = json.loads((CASES / "reference_cpu_whole_checkpoint" / "measurements.json").read_text())
    data["schema"] = "why17-measurements/2"
    data["device"].update(llc_bytes=260 * 2**20, threads=2)
    data["bw_runs_gbs"] = [27.5, 30, 29.1]
    data["peak_runs_tflops"] = [0.2, 0.15, 0.19]
    data["sweep_runs_gbs_by_mib"] = {"1": [0.1, 120.5, 130.0], "1024": [28.0, 29.0, 29.5]}
    data["rows"][0]["measured_tok_s_runs"] = [4.7, 14.245, 18.3]
    return data


def test_version_1_files_still_read_without_runs():
    table = measurements.parse((CASES / "reference" / "measurements.json").read_bytes())
    assert table.schema == "why17-measurements/1"
    assert table.bw_runs_gbs == () and table.sweep_runs_gbs_by_mib == {} and table.llc_bytes is None
    assert all(row.measured_tok_s_runs == () for row in table.rows)


def test_version_2_reads_runs_cache_and_threads():
    table = measurements.parse(json.dumps(version2()))
    assert table.llc_bytes == 260 * 2**20 and table.threads == 2
    assert table.bw_runs_gbs == (27.5, 30.0, 29.1) and table.peak_runs_tflops == (0.2, 0.15, 0.19)
    assert table.sweep_runs_gbs_by_mib[1] == (0.1, 120.5, 130.0)
    assert table.rows[0].measured_tok_s_runs == (4.7, 14.245, 18.3)


@pytest.mark.slow
def test_version_2_passes_every_task5_check(tmp_path):
    (tmp_path / "measurements.json").write_text(json.dumps(version2()))
    res = grade_submission(tmp_path, only=TASK5)
    assert {t["check"] for t in res["tests"]} == TASK5
    assert all(t["status"] == "passed" for t in res["tests"]), res["tests"]


@pytest.mark.parametrize("mutate, words", [
    (lambda d: d["rows"][0].update(measured_tok_s_runs=[4.7, 5.0]),
     "the figure 14.245 tokens/s is outside its runs 'rows[0].measured_tok_s_runs' (4.7-5)"),
    (lambda d: d.update(bw_runs_gbs=[]), "'bw_runs_gbs' must be a list of 1 to 64 runs in GB/s"),
    (lambda d: d.update(bw_runs_gbs=[30, -1]), "'bw_runs_gbs[1]' must be a positive number in GB/s"),
    (lambda d: d.update(peak_runs_tflops=[0.1, 0.15]),
     "the figure 0.2 TFLOP/s is outside its runs 'peak_runs_tflops' (0.1-0.15)"),
    (lambda d: d.update(sweep_runs_gbs_by_mib={"2": [1.0]}), "must map sizes of 'sweep_gbs_by_mib'"),
    (lambda d: d["device"].update(llc_bytes=3.5), "'device.llc_bytes' must be a positive whole number"),
    (lambda d: d["device"].update(threads=0), "'device.threads' must be a positive whole number"),
    (lambda d: d.update(schema="why17-measurements/1"),
     "has unknown key 'bw_runs_gbs' (it needs 'schema': 'why17-measurements/2')"),
    (lambda d: d.update(runs=[1]), "unknown key 'runs' (expected:"),
])
def test_wrong_new_fields_are_named_in_one_line(mutate, words):
    data = version2()
    mutate(data)
    with pytest.raises(measurements.MeasurementsError) as info:
        measurements.parse(json.dumps(data))
    assert words in str(info.value) and "\n" not in str(info.value)


def test_plot_data_carries_the_cache_threads_and_runs():
    data = plotdata.from_measurements(json.dumps(version2()).encode())
    assert data["device"]["llc_bytes"] == 260 * 2**20 and data["device"]["threads"] == 2
    assert data["device"]["type"] == "cpu"
    assert data["sweep_runs_gbs"]["1"] == [0.1, 120.5, 130.0]
    old = plotdata.from_measurements((CASES / "reference" / "measurements.json").read_bytes())
    assert old["sweep_runs_gbs"] == {} and old["device"]["type"] == "cuda"

"""The feedback page, in a real headless Chromium, reads the student's own sweep: a laptop whose copy
got faster with size is told its sweep rises and why, never that "below the cliff the copy looks
faster"; a GPU sweep with a cliff is still called one. Graded by the real grade-all command."""
from __future__ import annotations

import json
import subprocess
import sys

import pytest

from autograder.lessons.why17.fixtures.classes import QUICK_CHECKS, write_student
from tests.helpers.paths import ROOT
from tests.reports.browser import NEEDS_CHROMIUM, visit

CASES = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements"
MIB = 2**20
pytestmark = [NEEDS_CHROMIUM, pytest.mark.slow]     # slow: Chromium, and real gradings (`make check` leaves them out)


def laptop_table() -> dict:
    """A CPU Measure table whose sweep rises with size (a fixed cost per copy, a 260 MiB cache)."""
    data = json.loads((CASES / "reference_cpu_whole_checkpoint" / "measurements.json").read_text())
    data["schema"] = "why17-measurements/2"
    data["device"].update(llc_bytes=260 * MIB, threads=2)
    sweep = {"1": 0.2, "4": 0.5, "16": 1.7, "64": 2.9, "256": 3.8, "1024": 10.5}
    data["sweep_gbs_by_mib"] = sweep
    data["sweep_runs_gbs_by_mib"] = {k: [v * 0.9, v, v * 1.1] for k, v in sweep.items()}
    data["bw_gbs"], data["bw_runs_gbs"] = 30, [27.0, 29.0, 30]
    return data


@pytest.fixture(scope="module")
def out(tmp_path_factory):
    base = tmp_path_factory.mktemp("caption")
    laptop = write_student(base / "s", "s000", "reference_measured")
    (laptop / "measurements.json").write_text(json.dumps(laptop_table()))
    write_student(base / "s", "s001", "reference_measured")          # an H100 sweep with its cliff
    proc = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(base / "s"), "--out",
                           str(base / "o"), "--jobs", "1", "--checks", ",".join(QUICK_CHECKS)],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return base / "o"


def test_a_laptop_whose_sweep_rises_is_told_so_and_why(out, browser, tmp_path):
    facts = visit(browser, out / "s000" / "feedback.html", tmp_path / "laptop.png")
    text = facts["text"]
    assert "Your sweep rises instead of falling: 0.2 GB/s at 1 MiB up to 10.5 GB/s at 1024 MiB" in text
    assert "fixed cost per copy" in text and "260 MiB last-level cache" in text and "prefetchers" in text
    assert "Below the cliff" not in text and "looks faster" not in text
    assert "cache 260 MiB: no cliff in your sweep" in text                 # the chart's cache line
    assert facts["svgs"] == 2 and facts["errors"] == [] and facts["loaded"] == []


def test_a_gpu_sweep_with_a_cliff_is_still_called_one(out, browser, tmp_path):
    facts = visit(browser, out / "s001" / "feedback.html", tmp_path / "gpu.png")
    assert "Your sweep shows the cache cliff: 8,800 GB/s at 8 MiB" in facts["text"]
    assert "cache cliff (cache 50 MiB)" in facts["text"]
    assert "rises instead of falling" not in facts["text"] and facts["errors"] == []

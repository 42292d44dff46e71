"""`python -m autograder calibrate`: the table of ratios and verdicts.

`--device sim` runs for real here (the simulated GPU); `--device cuda` needs a GPU, and without
one it must say so in one line. The table's parts that need no device (device matching, the
layout, the disagreement line) are tested on plain data.
"""
from __future__ import annotations

import subprocess
import sys

import pytest
import torch

from autograder.lessons.why17 import calibrate
from shared.lessons.why17.gpu import RUBRIC
from shared.simgpu.judging import Verdict
from tests.helpers.paths import ROOT
from tests.lessons.why17.expected import WRONG

CHECKS = RUBRIC.checks
#: The table's columns: one per check, over every function it judges.
COLUMNS = tuple(CHECKS)


def column(vid: str) -> str:
    """The column of check instance ``vid``: 'sync_present.matmul_tflops' -> 'sync_present'."""
    return vid.split(".", 1)[0]


def cli(*args, timeout=600):
    return subprocess.run([sys.executable, "-m", "autograder", "calibrate", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout)


@pytest.fixture(scope="module")
def sim_table():
    done = cli("--device", "sim")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    return done.stdout


def rows(table: str) -> dict[str, list[str]]:
    """Submission name -> its cells, read back from the printed table by column position."""
    lines = table.splitlines()
    head = next(i for i, ln in enumerate(lines) if ln.startswith("submission"))
    starts = [lines[head].index(c) for c in COLUMNS] + [None]
    out = {}
    for line in lines[head + 2:]:
        if not line.strip():
            break
        out[line.split()[0]] = [line[a:b].strip() for a, b in zip(starts, starts[1:], strict=False)]
    return out


def test_expected_checks_are_the_gpu_tests_own():
    assert calibrate.EXPECTED == {name: check for name, (check, _words) in WRONG.items()}


@pytest.mark.slow
def test_sim_table_each_wrong_submission_fails_exactly_its_own_check(sim_table):
    table = rows(sim_table)
    assert set(table) == {p.name for p in calibrate.SUBMISSIONS.iterdir()
                          if p.is_dir() and p.name.startswith(("good_", "wrong_"))}
    for name, cells in table.items():
        failed = {c for c, cell in zip(COLUMNS, cells, strict=True) if "FAIL" in cell}
        assert failed == ({column(calibrate.EXPECTED[name])} if name.startswith("wrong_") else set()), (name, cells)
        if name.startswith("wrong_"):
            assert cells[COLUMNS.index(column(calibrate.EXPECTED[name]))].endswith("FAIL*")
    assert "0.50x FAIL*" in table["wrong_bytes_once"][COLUMNS.index("bytes_counted_twice")]
    assert "FAIL*" in table["wrong_flops_no_sync"][COLUMNS.index("sync_present")]   # matmul_tflops's
    assert sim_table.rstrip().endswith(": yes")


@pytest.mark.slow
def test_sim_table_compares_the_reference_with_the_spec(sim_table):
    spec = {ln.split("  ")[0]: ln for ln in sim_table.splitlines() if ln.startswith(("copy ", "matmul "))}
    assert list(spec) == [f"copy {m} MiB" for m in calibrate.SWEEP_MIB] + \
        [f"matmul {n} bf16" for n in calibrate.MATMUL_SIZES]
    for line in spec.values():
        ratio = float(line.split()[-1].rstrip("x"))
        assert 0.5 < ratio <= 1.0, line          # a reference below the spec, not above it
    assert "3350 GB/s" in spec["copy 4096 MiB"]  # the H100 SXM's spec from shared/data/hardware.yml


@pytest.mark.slow
@pytest.mark.skipif(torch.cuda.is_available(), reason="checks a machine without a CUDA GPU")
def test_cuda_without_a_gpu_is_one_line_and_exit_2():
    done = cli(timeout=300)
    assert done.returncode == 2 and done.stdout == ""
    assert len(done.stderr.strip().splitlines()) == 1 and "no CUDA GPU" in done.stderr
    assert "--device sim" in done.stderr


def test_unknown_profile_is_one_line():
    done = cli("--device", "sim", "--profile", "h900", timeout=300)
    assert done.returncode == 2 and "--profile" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1 and "Traceback" not in done.stderr


# The device is matched by name with shared.tables.device_for_gpu_name: tests/shared/test_device_match.py.


def test_table_names_each_disagreement():
    ok = {c: Verdict(c, True, "", 1.0) for c in COLUMNS}
    rows_ = [calibrate.SubmissionRow("good_a", dict(ok, warmup_present=Verdict("warmup_present", False, "", 0.4))),
             calibrate.SubmissionRow("wrong_bytes_once", ok),
             calibrate.SubmissionRow("wrong_no_sync", note="not measured: the time budget ran out")]
    spec = [calibrate.SpecRow("copy 256 MiB", 4000.0, 4800.0, "GB/s"),
            calibrate.SpecRow("matmul 4096 bf16", 600.0, None, "TFLOP/s")]
    text = calibrate.format_table("test device", spec, rows_)
    assert "0.83x" in text and "0.40x FAIL" in text and "1.00x ok*" in text
    assert "not measured: the time budget ran out" in text
    last = text.splitlines()[-1]
    assert "good_a fails warmup_present" in last and "wrong_bytes_once passes bytes_counted_twice" in last
    assert "wrong_no_sync: not measured" in last


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
def test_cuda_calibration_on_this_gpu():
    done = cli("--device", "cuda", timeout=600)
    assert done.returncode in (0, 1), done.stderr[-2000:]
    table = rows(done.stdout)
    assert set(table) >= set(calibrate.EXPECTED)
    assert "(CUDA; spec:" in done.stdout

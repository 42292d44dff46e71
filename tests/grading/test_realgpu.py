"""The real-GPU path: verdicts from real-GPU figures, the measuring child run on
this machine's CPU, and `grade --device cuda` falling back to the simulated GPU without one.

The verdict tests feed ``realgpu.judge`` the figures ``realgpu_pair.measure`` returns (plain
data), with a few percent of run-to-run spread, so each mistake's ratio is judged as a real GPU
would show it; the measuring code itself runs for real on the CPU (torch picks the CPU there).
"""
from __future__ import annotations

import json
import shutil
import subprocess
import sys

import pytest
import torch

from autograder.grading import real_gpu as realgpu_engine
from autograder.grading.grade import grade_submission
from autograder.lessons.why17 import realgpu, realgpu_pair
from autograder.lessons.why17.fixtures import build
from autograder.sandbox.parent import Limits
from shared.lessons.why17.gpu import rubric
from shared.lessons.why17.gpu.rubric import CHECK_IDS
from tests.helpers.paths import ROOT

#: Run-to-run spread of the three interleaved rounds (a busy GPU: a few percent).
SPREAD = (0.97, 1.0, 1.04)
NEEDS_GPU = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
NO_GPU_HERE = pytest.mark.skipif(torch.cuda.is_available(),
                                 reason="checks the fallback of a machine without a CUDA GPU")

REF_GBS, REF_TFLOPS, L2 = 3000.0, 700.0, 50 * 2**20


def figures(*, copy=1.0, cold=1.0, flops=1.0, cliff=1.0, buffer_l2=8.0, ref_cliff=2.6) -> dict:
    """What measure() returns for a student whose GB/s is ``copy`` x the reference's, whose first
    call reads ``cold`` x its later ones, whose cache cliff is ``cliff`` x the reference's, ..."""
    large = [[REF_GBS * s, REF_GBS * copy / s] for s in SPREAD]
    small = [[REF_GBS * ref_cliff * s, REF_GBS * copy * ref_cliff * cliff * s] for s in SPREAD]
    return {"device": "NVIDIA H100 80GB HBM3", "l2_bytes": L2, "small": L2 // 8, "large": 8 * L2,
            "cold": REF_GBS * copy * cold, "warm": [REF_GBS * copy * s for s in SPREAD],
            "large_pairs": large, "small_pairs": small,
            "matmul_pairs": [[REF_TFLOPS * s, REF_TFLOPS * flops * s * s] for s in SPREAD],
            "measured_bytes": int(buffer_l2 * L2), "errors": {}}


def failing(m: dict) -> set[str]:
    return {c for c, v in realgpu.judge(m).items() if not v.passed}


def test_correct_figures_pass_all_six_with_run_to_run_spread():
    found = realgpu.judge(figures())
    assert set(found) == set(CHECK_IDS)
    assert all(v.passed for v in found.values()), {c: v.message for c, v in found.items()}


@pytest.mark.parametrize("mistake, figs, message", [
    ("sync_present", dict(copy=40.0), "Forget to synchronize"),
    ("bytes_counted_twice", dict(copy=0.5), "counted the bytes once"),
    ("units_gb_per_s", dict(copy=1e9), "bytes per second"),
    ("units_gb_per_s", dict(copy=1e9 / 2**30), "GiB/s"),
    ("units_gb_per_s", dict(copy=1e-3), "milliseconds used as seconds"),
    ("warmup_present", dict(cold=0.6), "warm up"),
    ("buffer_exceeds_cache", dict(buffer_l2=1.0), "Tiny buffers"),
    ("buffer_exceeds_cache", dict(cliff=1 / 2.6), "honour n_bytes"),
    ("flops_counted_2n3", dict(flops=0.5), "counted n**3 FLOPs"),
])
def test_each_mistake_fails_exactly_its_own_check(mistake, figs, message):
    found = realgpu.judge(figures(**figs))
    assert failing(figures(**figs)) == {mistake}
    assert message in found[mistake].message and "x" in found[mistake].message


def test_a_call_that_raised_fails_with_its_one_line():
    m = figures()
    m["large_pairs"] = [[REF_GBS, None]] * 3
    m["errors"]["copy"] = "copy_bandwidth raised RuntimeError: CUDA out of memory"
    found = realgpu.judge(m)
    assert not found["sync_present"].passed
    assert "CUDA out of memory" in found["bytes_counted_twice"].message
    assert found["flops_counted_2n3"].passed


@pytest.mark.parametrize("l2", [2**20, 50 * 2**20, 60 * 2**20 + 12345, 96 * 2**20, 24 * 2**20 // 3])
def test_copy_sizes_are_the_simulated_checks_sizes(l2):
    """An eighth of the L2 and eight times it, whole MiB: the simulated checks' rule."""
    small, large = realgpu_pair.sizes(l2)
    assert (small, large) == rubric.sizes({"l2_bytes": l2})
    assert small <= l2 and large >= 8 * l2 and small % 2**20 == large % 2**20 == 0


@pytest.mark.slow
def test_the_measuring_child_runs_on_this_machine(tmp_path):
    """realgpu_pair's command line, as calibrate runs it, on the CPU here (the GPU submissions
    are CUDA-only; the reference's style, copied as the student's files, runs on either), with a
    small cache size so that it is quick; every figure comes back a positive number."""
    folder = tmp_path / "sub"
    folder.mkdir()
    for module in ("bw", "flops"):
        shutil.copy(ROOT / "solutions" / "why17" / f"{module}.py", folder / f"{module}.py")
    done = subprocess.run([sys.executable, "-m", "autograder.lessons.why17.realgpu_pair", str(folder),
                           str(ROOT / "solutions" / "why17"), str(2**20), "128"],
                          capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    m = json.loads(done.stdout.strip().splitlines()[-1])
    assert m["errors"] == {}
    assert m["cold"] > 0 and len(m["warm"]) == realgpu_pair.ROUNDS
    for key in ("large_pairs", "small_pairs", "matmul_pairs"):
        assert len(m[key]) == realgpu_pair.ROUNDS and all(r > 0 and s > 0 for r, s in m[key])
    assert m["measured_bytes"] >= 256 * 2**20        # the reference-style buffer, seen by the watch
    assert set(realgpu.judge(m)) == set(CHECK_IDS)


def test_prepare_keeps_the_reference_out_of_the_students_folder(tmp_path):
    sub = build.gpu_submission("good_events", tmp_path / "sub")
    (sub / "predict.py").write_text("x = 1\n")
    student, reference = realgpu_engine.prepare(realgpu, sub, ROOT / "solutions" / "why17")
    try:
        assert sorted(p.name for p in student.iterdir()) == ["bw.py", "flops.py"]
        assert (student / "bw.py").read_text() == (sub / "bw.py").read_text()
        assert sorted(p.name for p in reference.iterdir()) == ["bw.py", "flops.py", "grader_realgpu_pair.py"]
    finally:
        shutil.rmtree(student)
        shutil.rmtree(reference)


@pytest.mark.slow
def test_the_sandboxed_measurement_runs_here_with_the_reference_in_a_process_of_its_own(tmp_path):
    """The grader's path, on this machine's CPU: two sandboxed children, the student's files in one
    (the reference's style, which runs on a CPU) and the reference in the other."""
    sub = tmp_path / "sub"
    sub.mkdir()
    for module in ("bw", "flops"):
        shutil.copy(ROOT / "solutions" / "why17" / f"{module}.py", sub / f"{module}.py")
    m = realgpu_engine.measure_in_sandbox(realgpu, sub, ROOT / "solutions" / "why17", Limits(time_limit_s=300),
                                          l2_bytes=2**20, rounds=1, matmul_n=64)
    assert m["errors"] == {}
    assert m["device"] == ("cpu" if not torch.cuda.is_available() else m["device"])
    assert all(r > 0 and s > 0 for r, s in m["large_pairs"] + m["small_pairs"] + m["matmul_pairs"])


@pytest.mark.slow
def test_a_student_module_that_does_not_import_is_left_out_not_fatal(tmp_path):
    sub = tmp_path / "sub"
    sub.mkdir()
    shutil.copy(ROOT / "solutions" / "why17" / "bw.py", sub / "bw.py")
    (sub / "flops.py").write_text("raise ImportError('broken on purpose')\n")
    m = realgpu_engine.measure_in_sandbox(realgpu, sub, ROOT / "solutions" / "why17", Limits(time_limit_s=300),
                                          l2_bytes=2**20, rounds=1, matmul_n=64)
    assert m["matmul_pairs"] == [] and all(r > 0 and s > 0 for r, s in m["large_pairs"])


@pytest.mark.slow
@NO_GPU_HERE
def test_grade_device_cuda_without_a_gpu_says_so_and_scores_as_sim(tmp_path):
    sub = build.gpu_submission("wrong_bytes_once", tmp_path / "sub")   # a score below the maximum
    only = set(CHECK_IDS)
    cuda = grade_submission(sub, device="cuda", only=only)
    sim = grade_submission(sub, device="sim", only=only)
    assert cuda["score"] == sim["score"] < sum(t["max_score"] for t in sim["tests"])
    assert [(t["name"], t["score"], t["status"]) for t in cuda["tests"]] == \
        [(t["name"], t["score"], t["status"]) for t in sim["tests"]]
    lines = [ln for ln in cuda["output"].splitlines() if "no CUDA GPU" in ln]
    assert lines == [realgpu_engine.NO_GPU]
    assert "no CUDA GPU" not in sim["output"]


@NEEDS_GPU
def test_grade_device_cuda_adds_informational_real_gpu_tests(tmp_path):
    sub = build.gpu_submission("wrong_bytes_once", tmp_path / "sub")
    res = grade_submission(sub, device="cuda", only=set(CHECK_IDS))
    real = {t["check"]: t for t in res["tests"] if t["check"].endswith("/cuda")}
    assert set(real) == {f"{c}/cuda" for c in CHECK_IDS}
    assert all(t["max_score"] == 0 for t in real.values())
    assert real["bytes_counted_twice/cuda"]["status"] == "failed"
    assert real["sync_present/cuda"]["status"] == "passed"

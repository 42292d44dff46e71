"""python -m shared.simgpu: the student's own code on the simulated GPU, in a real process."""
from __future__ import annotations

import subprocess
import sys

import pytest

from autograder.lessons.why17.fixtures import build
from shared.lessons.why17.gpu import VERDICTS
from shared.simgpu.__main__ import randomized_note
from tests.helpers.paths import ROOT


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shared.simgpu", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)


@pytest.mark.slow
def test_reference_shows_the_cliff_the_matmul_and_passes_every_check():
    out = run("--device", "h100", ROOT / "solutions/why17/bw.py", ROOT / "solutions/why17/flops.py")
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    cliff = [line for line in lines if "<- cache cliff" in line]
    assert len(cliff) == 1 and cliff[0].split()[0] == "32"     # 8 MiB fits in 50 MiB, 32 MiB does not
    assert any(line.startswith("matmul_tflops(8192)") for line in lines)
    assert sum(line.strip().startswith("pass ") for line in lines) == len(VERDICTS)


@pytest.mark.slow
def test_the_checks_print_the_profile_they_run_on(tmp_path):
    """The checks run on a randomized profile: its L2 (the one "x the L2" in a message is of) is
    printed above them, apart from the table's figures the sweep is shown on."""
    from shared import simgpu
    checked, table = simgpu.config("h100", 17), simgpu.config("h100")
    assert checked["l2_bytes"] != table["l2_bytes"]
    out = run("--seed", "17", build.gpu_submission("wrong_tiny_measured", tmp_path) / "bw.py")
    head, _, checks = out.stdout.partition("GPU sanity checks")
    assert f"{table['l2_bytes'] / 2**20:.1f} MiB L2" in head.splitlines()[0]
    assert f"{checked['l2_bytes'] / 2**20:.1f} MiB L2" in checks.splitlines()[0]
    assert "FAIL buffer_exceeds_cache" in checks
    assert "\n".join(checks.splitlines()[1:5]).startswith(randomized_note(table, 17))


def test_the_checks_profile_says_its_l2_is_drawn_per_seed_and_why():
    # A student who reads 123 MiB of L2 for an H100 (a real one has 50) learns it is drawn on purpose.
    from shared import simgpu
    from shared.simgpu import profile
    note = " ".join(randomized_note(simgpu.config("h100"), 17).split())
    low, high = profile.constants()["randomize"]["l2"]
    assert "the real device's: 50.0 MiB L2" in note
    assert f"drawn from --seed 17: L2 {low:g}x to {high:g}x the table's" in note
    assert "assumed from the spec sheet fails here as at the grader" in note


@pytest.mark.slow
def test_a_mistake_is_named_and_the_exit_code_says_so(tmp_path):
    out = run(build.gpu_submission("wrong_bytes_once", tmp_path) / "bw.py")
    assert out.returncode == 1
    fails = [line for line in out.stdout.splitlines() if line.strip().startswith("FAIL")]
    # once: the sweep's bytes_counted_twice is charged on copy_bandwidth's
    assert len(fails) == 1 and "bytes_counted_twice" in fails[0] and "0.50x" in fails[0]
    assert "skip flops_counted_2n3" in out.stdout


@pytest.mark.slow
def test_a_folder_and_another_profile():
    # the reference's folder: a style that builds its buffers on the host first (gpu/good_timeit)
    # really allocates the 8 GiB sweep in host memory, 17 s here for nothing this test asks
    out = run("--device", "spark", ROOT / "solutions" / "why17")
    assert out.returncode == 0, out.stdout + out.stderr
    assert "DGX Spark" in out.stdout and "cache cliff" in out.stdout


@pytest.mark.slow
def test_a_module_that_does_not_import_is_one_line(tmp_path):
    (tmp_path / "bw.py").write_text("def copy_bandwidth(:\n")
    out = run(tmp_path / "bw.py")
    assert out.returncode == 1
    assert "does not import: SyntaxError line 1" in out.stderr and "Traceback" not in out.stderr


@pytest.mark.parametrize("args,words", [
    (["nope/bw.py"], "no such file"),
    (["--device", "ddr5", "solutions/why17/bw.py"], "not a GPU"),
    (["--device", "h999", "solutions/why17/bw.py"], "unknown device"),
    (["solutions/why17/predict.py"], "expected bw.py or flops.py"),
])
def test_bad_usage_is_one_line_and_exit_2(args, words):
    out = run(*args)
    assert out.returncode == 2
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1
    assert "Traceback" not in out.stderr

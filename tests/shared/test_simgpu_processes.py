"""Each device setting in a fresh process, as the grader runs it: shared/simgpu/processes.py and
python -m shared.simgpu on correct styles that keep state between calls of one process."""
from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from shared import simgpu
from shared.simgpu import processes, settings
from tests.helpers.paths import ROOT

ADVERSARIAL = ROOT / "autograder/lessons/why17/fixtures/adversarial"

COUNTER = '''
import os
import time

import torch

CALLS = []
IMPORTED_ON_CUDA = torch.cuda.is_available()


def count():
    """(this process's id, calls so far in it, whether the import saw CUDA)."""
    CALLS.append(1)
    return (os.getpid(), len(CALLS), IMPORTED_ON_CUDA)


def timed():
    """A tensor on the device, and a number as numpy gives it."""
    import numpy as np
    x = torch.empty(1 << 20, dtype=torch.uint8, device="cuda")
    y = torch.empty_like(x)
    t0 = time.perf_counter()
    y.copy_(x)
    torch.cuda.synchronize()
    return {"t": np.float64(time.perf_counter() - t0), "x": x, "pair": (1, 2.5)}


def spin():
    while True:
        pass


def die():
    os._exit(9)
'''


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "shared.simgpu", *map(str, args)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture
def counter(tmp_path):
    (tmp_path / "counter.py").write_text(COUNTER)
    simgpu.install()
    cfgs = settings.base("h100", 17)
    with processes.ProcessRunner({"counter": tmp_path / "counter.py"}, None, limit_s=20) as runner:
        yield runner, cfgs


def test_a_setting_keeps_its_process_until_the_calls_move_on_and_each_is_fresh(counter):
    runner, cfgs = counter
    ideal, warm = cfgs["ideal"], cfgs["async"]
    first = runner.student("counter", "count", sim=ideal)
    assert first[1:] == (1, True)                # imported on the simulated GPU, as on a GPU machine
    assert runner.student("counter", "count", sim=ideal) == (first[0], 2, True)
    other = runner.student("counter", "count", sim=warm)
    assert other[0] != first[0] and other[1] == 1
    again = runner.student("counter", "count", sim=ideal)
    assert again[0] not in (first[0], other[0]) and again[1] == 1
    assert runner.starts == 3


def test_a_call_gives_plain_values_and_its_own_trace(counter):
    runner, cfgs = counter
    value, trace = runner.student_traced("counter", "timed", sim=cfgs["ideal"])
    assert isinstance(value["t"], float) and value["t"] > 0 and value["pair"] == (1, 2.5)
    assert isinstance(value["x"], processes.Array) and value["x"].data is None   # no values on the device
    assert trace["bytes_moved"] == 2 * 2**20 and trace["timed"]["duration_s"] > 0
    _, again = runner.student_traced("counter", "timed", sim=cfgs["ideal"])
    assert again["bytes_moved"] == 2 * 2**20          # each call's trace starts empty


@pytest.mark.parametrize("function,words", [("spin", "spin did not return within 0.5 s"),
                                            ("die", "ended (exit code 9)")])
def test_a_call_that_hangs_or_kills_its_process_is_charged_once(counter, function, words):
    runner, cfgs = counter
    runner.limit_s = 0.5
    with pytest.raises(processes.StudentFailed) as first:
        runner.student("counter", function, sim=cfgs["ideal"])
    assert words in str(first.value)
    starts = runner.starts
    with pytest.raises(processes.StudentFailed) as again:   # another setting: not run again
        runner.student("counter", function, sim=cfgs["cold"])
    assert again.value is first.value and runner.starts == starts
    assert runner.student("counter", "count", sim=cfgs["cold"])[1] == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", ["good/warmup_at_import_behind_flag", "good/pool_reused_across_calls",
                                  "good/pool_started_at_import"])
def test_state_kept_between_calls_of_one_process_passes_as_in_the_grader(name, tmp_path):
    """A module-level warm-up flag and a thread pool reused from call to call are correct: the
    grader runs each setting in a fresh process, and so does the student's command."""
    folder = shutil.copytree(ADVERSARIAL / name, tmp_path / "sub", ignore=shutil.ignore_patterns("__pycache__"))
    out = run(folder)
    assert out.returncode == 0, out.stdout + out.stderr
    verdicts = [line.split()[0] for line in out.stdout.splitlines() if line.startswith("  ")
                and line.split()[0] in ("pass", "FAIL")]
    assert len(verdicts) == 18 and set(verdicts) == {"pass"}


@pytest.mark.slow
@pytest.mark.parametrize("name,check", [("wrong/no_warmup", "warmup_present"),
                                        ("wrong/thread_matmul_no_sync", "sync_present.matmul_tflops")])
def test_a_missing_warmup_or_sync_still_fails_locally(name, check, tmp_path):
    folder = shutil.copytree(ADVERSARIAL / name, tmp_path / "sub", ignore=shutil.ignore_patterns("__pycache__"))
    out = run(folder)
    assert out.returncode == 1
    fails = [line.split()[1].rstrip(":") for line in out.stdout.splitlines() if line.startswith("  FAIL ")]
    assert fails == [check], out.stdout


@pytest.mark.slow
@pytest.mark.parametrize("body,words", [
    ("while True:\n    pass\n", "bw.py did not finish importing within 1 s"),
    ("def bandwidth_sweep(sizes_mb=(8,), iters=50, device=None):\n    while True:\n        pass\n",
     "what the table shows did not finish within 3 s"),
    ("import os\nos._exit(9)\n", "ended (exit code 9)"),
])
def test_a_module_that_hangs_or_dies_is_one_line_and_exit_1(body, words, tmp_path):
    (tmp_path / "bw.py").write_text(body)
    out = run("--time-limit", "1", tmp_path / "bw.py")
    assert out.returncode == 1
    assert words in out.stderr and len(out.stderr.strip().splitlines()) == 1, out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.slow
def test_a_function_that_hangs_in_the_checks_fails_them_in_one_line_each(tmp_path):
    (tmp_path / "bw.py").write_text(
        "import time\nSHOWN = []\n"
        "def copy_bandwidth(n_bytes, iters=50, device=None):\n    while True:\n        pass\n"
        "def bandwidth_sweep(sizes_mb=(8,), iters=50, device=None):\n    return {8: 1.0}\n"
        "def measured_bandwidth(device=None):\n    return 1.0\n")
    out = run("--time-limit", "1", tmp_path / "bw.py")
    assert out.returncode == 1 and "Traceback" not in out.stdout + out.stderr
    hung = [line for line in out.stdout.splitlines() if "copy_bandwidth did not return within 1 s" in line]
    assert hung and all(line.startswith("  FAIL ") for line in hung)

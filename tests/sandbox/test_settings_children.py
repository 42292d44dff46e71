"""Each simulated-GPU setting's calls run in a child of its own (autograder/sandbox/perfile.py):
a student's process never sees two settings, and a hang on one setting costs one limit for all.
"""
from __future__ import annotations

from pathlib import Path

import pytest

from autograder.core.errors import StudentTimeout
from autograder.sandbox.parent import Limits
from autograder.sandbox.perfile import PerFileSandbox
from shared.simgpu import settings as simsettings
from tests.helpers import lesson_server

#: Slow, left out of `make check`: every test calls through the fork server this module starts.
pytestmark = pytest.mark.slow

MODULE = ("import os\n"
          "TOKEN = os.urandom(8).hex()   # one per process\n\n"
          "def token(tag):\n"
          "    print(tag)\n"
          "    return TOKEN\n")


@pytest.fixture(scope="module", autouse=True)
def fork_server():
    """Children fork from a process that already imported torch."""
    lesson_server.keep()


def _configs() -> list[dict]:
    cfgs = simsettings.base("h100-sxm", 7)
    return [cfgs[name] for name in cfgs["order"]]


def _sandbox(tmp_path: Path) -> PerFileSandbox:
    (tmp_path / "m.py").write_text(MODULE)
    return PerFileSandbox(tmp_path, Limits(time_limit_s=60), heavy=("m",), preload=("torch",), simgpu=True)


def test_each_setting_runs_in_a_process_of_its_own_and_its_output_keeps_the_calls_order(tmp_path):
    box = _sandbox(tmp_path)
    cfgs = _configs()
    try:
        tokens = [box.call("m", "token", (f"call {i}",), sim=cfg)[0] for i, cfg in enumerate(cfgs)]
        again = box.call("m", "token", ("again",), sim=cfgs[-1])[0]
        assert box.starts == 1                            # no restart was needed
    finally:
        box.close()                                       # what the last child printed is kept
    assert len(set(tokens)) == len(cfgs)                  # four settings, four processes
    assert again == tokens[-1]                            # the live child serves its own setting
    printed = box.output()
    assert [printed.index(f"call {i}") for i in range(len(cfgs))] == sorted(
        printed.index(f"call {i}") for i in range(len(cfgs)))


def test_a_hang_on_the_real_device_does_not_end_the_function_on_the_simulated_gpu(tmp_path):
    """A function too slow for the grading CPU (flops_peak_plausible times it there) is still
    judged on the simulated GPU; a hang there costs one limit for every setting."""
    (tmp_path / "slow.py").write_text(
        "import time\nimport torch\n\n"
        "def peak():\n"
        "    if not torch.cuda.is_available():\n"
        "        time.sleep(600)          # too slow for this CPU\n"
        "    return 1.0\n\n"
        "def hang():\n"
        "    while torch.cuda.is_available():   # a busy loop: sleeping moves the device's clock\n"
        "        pass\n"
        "    return 2.0\n")
    box = PerFileSandbox(tmp_path, Limits(time_limit_s=1.5), heavy=("slow",), preload=("torch",), simgpu=True)
    first, second = _configs()[:2]
    try:
        with pytest.raises(StudentTimeout):
            box.call("slow", "peak")
        assert box.call("slow", "hang")[0] == 2.0
        assert box.call("slow", "peak", sim=first)[0] == 1.0    # (the child's first device call)
        with pytest.raises(StudentTimeout) as hung:
            box.call("slow", "hang", sim=first)
        with pytest.raises(StudentTimeout) as again:  # not run again on another setting:
            box.call("slow", "hang", sim=second)
        assert again.value is hung.value              # the first hang's error, raised again
    finally:
        box.close()

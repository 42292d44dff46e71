"""Load never moves a CPU check's verdict: flops_returns_tflops judges the student's number by
itself, never against a second process's timing; and the reference stopped inside its timed loop,
as a preempted process is, reads the TFLOP/s the reference reads.

The CPU checks of bw.py and flops.py time the student's and the reference's functions on the
grading machine's real CPU. There the child's clocks read the process's CPU time
(shared/simgpu/hostclock.py), so the time a process spends off the CPU, waiting for a core on a
busy machine, never enters a reading. The stop is forced, not hoped for: a helper process stops
the child with SIGSTOP inside every timed loop and continues it STOP_S later, which with wall
clocks makes each reading hundreds of times too slow; the test asserts the numbers agree within SPREAD,
far inside what the stop does to wall clocks.
"""
from __future__ import annotations

import pytest

from autograder.api import CheckFailed
from autograder.lessons.why17.checks import flops_cpu
from autograder.lessons.why17.fixtures import build
from autograder.runtime.dtypes import Dtype
from autograder.sandbox.parent import Limits, Sandbox

#: How long the child stays stopped inside each timed loop, in seconds: a matmul_tflops call of
#: the probe's size takes well under a millisecond, so with wall clocks its number drops by far
#: more than SPREAD.
STOP_S = 0.1
#: Calls of each side in the stopped-loop test; the fastest counts.
CALLS = 5
#: The reference's first and last clock readings of matmul_tflops, and the same with a stop
#: between them (the helper is forked before the first: a fork's own CPU time is not the stop's).
TIMED_START, TIMED_END = "    start = time.perf_counter()\n", "    seconds = time.perf_counter() - start\n"
STOPPED = {TIMED_START: f"    helper = _helper({STOP_S})\n" + TIMED_START,
           TIMED_END: "    _stopped(helper)\n" + TIMED_END}
#: A helper process that, when asked, stops the caller, waits, and continues it: what the
#: scheduler does to a process that loses its core (the helper waits in a select of its own:
#: whatever it passes on its copy of the clocks, the caller's stand still).
HELPER = '''

def _helper(seconds):
    import os, select, signal
    caller = os.getpid()
    ask_r, ask_w = os.pipe()
    done_r, done_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.read(ask_r, 1)
        os.kill(caller, signal.SIGSTOP)
        select.select([], [], [], seconds)
        os.kill(caller, signal.SIGCONT)
        os.write(done_w, b"x")
        os._exit(0)
    return ask_w, done_r, pid


def _stopped(helper):
    import os
    ask_w, done_r, pid = helper
    os.write(ask_w, b"x")
    os.read(done_r, 1)
    os.waitpid(pid, 0)
    os.close(ask_w)
    os.close(done_r)
'''
#: Largest ratio of the stopped reference's best TFLOP/s to the quiet one's (or back): CPU time
#: of the same work varies a little with what else runs (caches); the stop alone makes it ~100x+.
SPREAD = 10.0


def _reference(folder, flops_text=None):
    """The reference's modules in ``folder``, with flops.py's text replaced when given."""
    folder.mkdir()
    for module in build.MODULES:
        text = (build.REFERENCE / f"{module}.py").read_text(encoding="utf-8")
        (folder / f"{module}.py").write_text(flops_text if module == "flops" and flops_text else text,
                                             encoding="utf-8")
    return folder


def _best_tflops(folder) -> float:
    """The best of CALLS matmul_tflops calls of flops_returns_tflops's size, in the sandboxed child."""
    with Sandbox(folder, Limits(time_limit_s=120.0)) as box:
        box.has("flops")
        kwargs = dict(iters=flops_cpu.PROBE_ITERS, dtype=Dtype("float32"), device="cpu")
        return max(box.call("flops", "matmul_tflops", (flops_cpu.PROBE_N,), kwargs)[0]
                   for _ in range(CALLS))


@pytest.mark.slow
def test_a_stop_inside_the_timed_loop_leaves_the_number_as_it_was(tmp_path):
    text = (build.REFERENCE / "flops.py").read_text(encoding="utf-8")
    stopped_text = text + HELPER
    for line, replacement in STOPPED.items():
        assert text.count(line) == 1
        stopped_text = stopped_text.replace(line, replacement)
    quiet = _best_tflops(_reference(tmp_path / "quiet"))
    stopped = _best_tflops(_reference(tmp_path / "stopped", stopped_text))
    assert 1 / SPREAD < stopped / quiet < SPREAD, (stopped, quiet)


class _Readings:
    """A grading context whose student call reads ``student`` TFLOP/s and whose reference reads
    ``reference``, as two processes on a loaded machine can."""

    def __init__(self, student: float, reference: float):
        self.student, self.reference_reads = student, reference

    def call(self, module, function, *args, **kwargs):
        return self.student

    def reference(self, module, function, *args, **kwargs):
        return self.reference_reads


@pytest.mark.parametrize("apart", [1.0, 31.97, 1 / 31.97, 1000.0])
def test_matmul_tflops_is_judged_by_its_own_number_whatever_a_second_process_reads(apart):
    """A full-suite run once read the reference's TFLOP/s 31.97x below the student's (the same
    flops.py), and flops_returns_tflops failed the student. A plausible number passes however far
    apart another process's timing of the same work lands."""
    flops_cpu.returns_tflops(_Readings(0.05, 0.05 / apart))


@pytest.mark.parametrize("value", [-0.05, 0.0, float("nan"), 1e-9, 5e16])
def test_a_number_no_cpu_reads_still_fails_matmul_tflops(value):
    with pytest.raises(CheckFailed):
        flops_cpu.returns_tflops(_Readings(value, 0.05))

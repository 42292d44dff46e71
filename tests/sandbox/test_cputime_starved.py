"""Time the machine keeps a child from running (cputime.Held): read from the kernel's run-queue
count, so that neither a call's deadlines nor a grading's budget (GradingContext.budget_left)
count what a busy machine takes from it, while a child that keeps itself waiting (processes of
its own on the same core) is given nothing. Busy loops pinned to one core keep each other
waiting whatever else the machine does; a sleeping process never waits for a core."""
from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import time
from types import SimpleNamespace

import pytest

from autograder.grading.context import GradingContext
from autograder.sandbox import cputime

BUSY = "while True: pass"
#: A process that starts two busy processes of its own, then spins too.
SELF_STARVING = "import subprocess, sys\n" + "".join(
    f"p{i} = subprocess.Popen([sys.executable, '-c', 'while True: pass'])\n" for i in range(2)) + BUSY
#: Seconds of waiting to see before judging: many scheduler slices (a few ms each).
SEEN_S = 0.3
#: Backstop for a machine so busy that the loops barely run: the tests wait for what they
#: count, and never assert a time.
BACKSTOP_S = 120.0


@contextlib.contextmanager
def _processes(*codes: str, cpu: int | None = None):
    """Processes running ``codes``, pinned to core ``cpu`` with all they start, killed after."""
    procs = []
    try:
        for code in codes:
            pin = "" if cpu is None else f"import os; os.sched_setaffinity(0, {{{cpu}}})\n"
            procs.append(subprocess.Popen([sys.executable, "-c", pin + code], start_new_session=True))
        yield procs
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, 9)
            proc.wait()


def _state(pid: int) -> str:
    """R (running or runnable), S (asleep), ... of process ``pid``."""
    with open(f"/proc/{pid}/stat") as fh:
        return fh.read().rsplit(")", 1)[1].split()[0]


def _held(pid: int) -> cputime.Held:
    """A Held from now for process ``pid``'s tree, as a call into it starts one."""
    tree = cputime.Tree(pid)
    cpu = tree.seconds()
    if pid not in tree.waited:
        pytest.skip("this kernel keeps no run-queue count (/proc/PID/schedstat): deadlines count wall time")
    return cputime.Held(tree, cpu, time.monotonic())


def _wait_for(what, at_least: float) -> float:
    until = time.monotonic() + BACKSTOP_S
    while (seen := what()) < at_least and time.monotonic() < until:
        time.sleep(0.05)
    return seen


def test_a_child_kept_from_its_core_by_another_process_is_held_back():
    cpu = min(os.sched_getaffinity(0))
    with _processes(BUSY, BUSY, cpu=cpu) as (one, _other):
        held = _held(one.pid)
        assert _wait_for(held.total, SEEN_S) >= SEEN_S
        assert held.total() <= time.monotonic() - held.started     # never more than the call's own time
        more = held.more()
        assert more >= SEEN_S and held.given == more                # handed out once
        assert held.more() < more


def test_a_child_that_keeps_itself_waiting_is_given_nothing():
    """Its own three processes on one core wait for each other, and the tree keeps the core busy:
    what it is given is at most the time it was off every core (none, on a quiet core)."""
    cpu = min(os.sched_getaffinity(0))
    with _processes(SELF_STARVING, cpu=cpu) as (spinner,):
        tree = cputime.Tree(spinner.pid)

        def processes_seen() -> int:
            tree.seconds()                      # reads the tree afresh, and each process's wait
            return len(tree.waited)

        _wait_for(processes_seen, 3)
        held = _held(spinner.pid)
        cpu_then = cputime.tree_seconds(spinner.pid)

        def waited() -> float:
            held.tree.seconds()
            return held.tree.starved_since(held.waited)

        assert _wait_for(waited, 2 * SEEN_S) >= 2 * SEEN_S          # its processes do wait...
        given = held.total()
        off_cpu = time.monotonic() - held.started - (cputime.tree_seconds(spinner.pid) - cpu_then)
        assert given <= max(0.0, off_cpu) + 0.05                     # ...on each other: not given


def test_a_sleeping_process_is_never_held_back():
    with _processes("import time; time.sleep(600)") as (sleeper,):
        while _state(sleeper.pid) != "S":     # started (which may wait for a core), now asleep
            time.sleep(0.01)
        held = _held(sleeper.pid)
        time.sleep(0.5)
        assert held.total() < 0.05


def test_a_gradings_budget_leaves_out_what_its_children_were_held_back_from_its_start():
    cpu = min(os.sched_getaffinity(0))
    sandbox = SimpleNamespace(limits=SimpleNamespace(time_limit_s=5.0))
    context = dict(seed=1, device="sim", submission_dir=".", sim_profile="h100-sxm", secret="s")
    with _processes(BUSY, BUSY, cpu=cpu) as (one, _other):
        ctx = GradingContext(sandbox, sandbox, **context, deadline=time.monotonic() + 10.0)
        assert ctx.budget_left() <= 10.0
        held = _held(one.pid)
        _wait_for(held.total, SEEN_S)
        cputime.STARVED.add(held)                       # what a call into it adds when it ends
        assert ctx.budget_left() >= 10.0 - (time.monotonic() - held.started) + SEEN_S - 0.01
        later = GradingContext(sandbox, sandbox, **context, deadline=time.monotonic() + 10.0)
        assert later.budget_left() <= 10.0              # held back before it began: not its time

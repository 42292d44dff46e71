"""Between calls a child is stopped, threads and all (autograder/sandbox/launch.py ``pause``): a
thread a submission starts at import burns no CPU while the grader is not waiting for a reply,
and the next call finds everything as it was."""
from __future__ import annotations

import os
import time

from autograder.sandbox.parent import Limits, Sandbox

SPINNER = '''
import threading

SPINS = [0]


def _spin():
    while True:
        SPINS[0] += 1


threading.Thread(target=_spin, daemon=True).start()


def spins():
    return SPINS[0]
'''


def states(pgid: int) -> list[str]:
    """The scheduler state of every thread of every process in group ``pgid``."""
    out = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/stat") as f:
                if int(f.read().rsplit(")", 1)[1].split()[2]) != pgid:
                    continue
            for tid in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{tid}/stat") as f:
                    out.append(f.read().rsplit(")", 1)[1].split()[0])
        except (OSError, ValueError, IndexError):
            continue
    return out


def settled(pgid: int, tries: int = 400) -> list[str]:
    """The states once no thread is running any more (a stop reaches each thread in turn)."""
    for _ in range(tries):
        seen = states(pgid)
        if seen and "R" not in seen:
            return seen
        time.sleep(0.005)
    return states(pgid)


def test_a_thread_started_at_import_is_stopped_between_calls_and_runs_again_in_the_next(tmp_path):
    (tmp_path / "spinner.py").write_text(SPINNER)
    with Sandbox(tmp_path, Limits(time_limit_s=60), preload=(), simgpu=False) as sb:
        first, _ = sb.call("spinner", "spins")
        group = sb.child.proc.pid
        seen = settled(group)
        assert seen and set(seen) == {"T"}, seen             # every thread of every process: stopped
        second, _ = sb.call("spinner", "spins")
        assert second > first                                # it ran again during the call
        assert set(settled(group)) == {"T"}

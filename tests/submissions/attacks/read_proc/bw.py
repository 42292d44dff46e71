"""Attack: look at the grader through /proc: other processes' command lines, environments, memory.

``search()`` returns the pids it could see and what it read that belongs to the grader (a command
line or environment naming pytest or the autograder); the test asserts the second list is empty.
"""
import os

ATTACK = True
GRADER_SIGNS = (b"pytest", b"-m\x00autograder", b"autograder grade", b"PYTEST_CURRENT_TEST",
                b"grade-all", b"forkserver")


def _read(path, n=1 << 16):
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return b""


def search():
    me = os.getpid()
    seen, hits = [], []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == me:
            continue
        seen.append(int(entry))
        for what in ("cmdline", "environ"):
            data = _read(f"/proc/{entry}/{what}")
            if any(sign in data for sign in GRADER_SIGNS):
                hits.append((int(entry), what))
        if _read(f"/proc/{entry}/mem", 16):
            hits.append((int(entry), "mem"))
    parent = os.getppid()
    for what in ("cmdline", "environ"):
        data = _read(f"/proc/{parent}/{what}")
        if any(sign in data for sign in GRADER_SIGNS):
            hits.append((parent, what))
    return {"seen": sorted(seen), "hits": hits}


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        search()
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0

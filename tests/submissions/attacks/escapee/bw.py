"""Attack: leave a grandchild behind that outlives grading (new session, renamed) and keeps trying
to write results."""
import ctypes
import os
import time

ATTACK = True
NAME = b"why17-escapee"


def escape():
    """Double-fork a detached grandchild named ``why17-escapee`` that lives a minute."""
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            ctypes.CDLL(None).prctl(15, NAME, 0, 0, 0)       # PR_SET_NAME
            end = time.time() + 60                # bounded, in case it ever runs unjailed
            while time.time() < end:
                for path in ("results.json", "/tmp/results.json"):
                    try:
                        with open(path, "w") as f:
                            f.write('{"score": 1000}')
                    except OSError:
                        pass
                time.sleep(0.2)
        os._exit(0)
    time.sleep(0.5)
    return True


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        escape()
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


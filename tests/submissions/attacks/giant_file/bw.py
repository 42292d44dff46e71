"""Attack: fill the disk with one giant file (the file-size limit stops it)."""
import os

ATTACK = True


def fill(path="giant.bin", limit=2**30):
    """Write 1 MiB blocks until refused or at ``limit`` bytes; the bytes written."""
    block = b"x" * 2**20
    done = 0
    try:
        with open(path, "wb") as f:
            while done < limit:
                f.write(block)
                f.flush()
                done += len(block)
    except OSError:
        pass
    return os.path.getsize(path)


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        fill()
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


"""Attack baseline: the values every attack's bw.py returns, without any attack.

An attack gains something only if it scores more than this file does on some check.
"""


def copy_bandwidth(n_bytes, iters=50, device=None):
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0

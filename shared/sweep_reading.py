"""What a bandwidth sweep shows, read from its own numbers: a cache cliff, no cliff, or the inverse.

The lesson's cache cliff (small buffers copy faster, since both sit in the last-level cache) is
plain on a GPU and often absent on a CPU. The notebook's labels and the feedback page's caption come
from ``read``, so neither claims a cliff the student's numbers do not show, and where there is none
it says why from the same numbers. Pure functions: no device, no clock.

Units: buffer sizes in MiB (2**20 bytes), bandwidth in GB/s (1e9 bytes/s), caches in bytes, copy
times in microseconds.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

MIB = 2**20
#: One end of the sweep must be this many times the other (and outside the other's run-to-run
#: range, when runs are given) before the sweep is said to fall or rise; within it, it is flat.
STEP = 1.5
#: A buffer this many times the last-level cache streams from main memory (bw.py's CACHE_MULTIPLE).
MEMORY_MULTIPLE = 4
#: A copy time that grows less than this power of the size is set by a fixed cost, not by bytes
#: (bytes alone give a power of 1; a fixed cost, 0).
FIXED_COST_POWER = 0.5

SHAPES = ("cliff", "flat", "rising", "one size")


@dataclass(frozen=True)
class Reading:
    """The sweep's shape (one of SHAPES), a caption to print under it, and a label per size."""

    shape: str
    caption: str
    #: MiB -> "fits in the cache" (a cliff shows it), "fits in the cache, no faster here", "past the
    #: cache" (under MEMORY_MULTIPLE x it), "main memory", or "" (cache size unknown)
    labels: dict


def _finite_positive(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x) and x > 0


def _mib(size: float) -> str:
    return f"{size:g} MiB"


def _gbs(x: float) -> str:
    return f"{x:,.0f} GB/s" if x >= 100 else f"{x:.3g} GB/s"


def _copy_us(size_mib: float, gbs: float) -> float:
    """Microseconds one copy of ``size_mib`` took at ``gbs`` (a copy moves 2 x the buffer)."""
    return 2 * size_mib * MIB / (gbs * 1e9) * 1e6


def fits(size_mib: float, llc_bytes: int | None) -> bool:
    """Whether a copy's source and destination fit in the last-level cache together."""
    return bool(llc_bytes) and 2 * size_mib * MIB <= llc_bytes


def read(sweep: dict, *, llc_bytes: int | None = None, device_type: str = "cpu",
         threads: int | None = None, runs: dict | None = None) -> Reading:
    """Read a sweep (MiB -> GB/s, the median where it was repeated).

    ``llc_bytes``: the last-level cache (the L2 on a GPU), None when unknown; ``device_type``:
    "cpu" or "cuda"; ``threads``: torch's CPU threads, when known; ``runs``: MiB -> the GB/s of
    each repeat, when the sweep was repeated (a difference inside the runs' range is not a step).
    Sizes or values that are not positive finite numbers are left out.
    """
    clean = {float(s): float(g) for s, g in sweep.items() if _finite_positive(_num(s)) and _finite_positive(g)}
    ranges = {}
    for s, values in (runs or {}).items():
        vals = [float(v) for v in values if _finite_positive(v)] if isinstance(values, (list, tuple)) else []
        if _finite_positive(_num(s)) and vals:
            ranges[float(s)] = (min(vals), max(vals))
    llc = llc_bytes if _finite_positive(llc_bytes) else None
    sizes = sorted(clean)
    if len(sizes) < 2:
        only = f" ({_mib(sizes[0])}: {clean[sizes[0]]:.3g} GB/s)" if sizes else ""
        return Reading("one size", f"One buffer size{only}: no curve to read a cache cliff from.",
                       {s: _label(s, llc, False) for s in sizes})
    small, large = sizes[0], sizes[-1]
    in_cache = [s for s in sizes if fits(s, llc)] if llc else [small]
    cache_size = max(in_cache, key=lambda s: clean[s]) if in_cache else small
    falls = _steps(clean, ranges, cache_size, large) and bool(in_cache) and not fits(large, llc if llc else 0)
    if not falls and not fits(large, llc if llc else 0):
        # A size the cache report does not cover (an unknown or under-reported cache) that still runs
        # STEP x the large buffer is a fall all the same: never call that sweep flat.
        peak = max(sizes[:-1], key=lambda s: clean[s])
        if _steps(clean, ranges, peak, large):
            falls, cache_size = True, peak
    rises = _steps(clean, ranges, large, small)
    shape = "cliff" if falls else "rising" if rises else "flat"
    labels = {s: _label(s, llc, shape == "cliff") for s in sizes}
    if shape == "cliff":
        where = (f", where both buffers fit in the {llc / MIB:g} MiB last-level cache" if fits(cache_size, llc)
                 else ", a size whose copy still ran from a cache")
        caption = (f"Your sweep shows the cache cliff: {_gbs(clean[cache_size])} at "
                   f"{_mib(cache_size)}{where}, against {_gbs(clean[large])} at {_mib(large)} from main "
                   f"memory ({clean[cache_size] / clean[large]:.2g}x). Below the cliff the copy measures the "
                   f"cache, not the memory; the ceilings use the main-memory number.")
        fixed = _fixed_cost(clean, sizes, threads, device_type)
        if fixed and clean[small] < clean[large]:
            caption += f" Your smallest copies are slow for another reason: {fixed}."
        return Reading(shape, caption, labels)
    if shape == "rising":
        head = (f"Your sweep rises instead of falling: {_gbs(clean[small])} at {_mib(small)} up to "
                f"{_gbs(clean[large])} at {_mib(large)}, the inverse of the cache cliff. That is this "
                f"machine, not your code.")
    else:
        hi, lo = max(clean[small], clean[large]), min(clean[small], clean[large])
        if hi < STEP * lo:
            why_flat = f"within {STEP:g}x of each other"
        else:
            spans = [f"{ranges[s][0]:.3g}-{ranges[s][1]:.3g}" for s in (small, large) if s in ranges]
            why_flat = f"inside their run-to-run range ({' and '.join(spans)} GB/s)"
        head = (f"Your sweep shows no cache cliff: {_gbs(clean[small])} at {_mib(small)} and "
                f"{_gbs(clean[large])} at {_mib(large)} are {why_flat}.")
    reasons = _reasons(clean, sizes, llc, device_type, threads)
    tail = _unsteady(clean, ranges, sizes) + " The ceilings use the large-buffer number, the one decode streams at."
    return Reading(shape, f"{head} Why: {'; '.join(reasons)}.{tail}" if reasons else head + tail, labels)


def _unsteady(clean: dict, ranges: dict, sizes: list) -> str:
    """A sentence on the sizes whose median is STEP x the largest size's but whose runs reach down to it
    (some copies ran from a cache, some did not), so a caption of no cliff never hides them; or ""."""
    large = sizes[-1]
    spread_out = [s for s in sizes[:-1] if clean[s] >= STEP * clean[large] and s in ranges]
    if not spread_out:
        return ""
    said = ", ".join(f"{_mib(s)}: {ranges[s][0]:.3g}-{ranges[s][1]:.3g} GB/s" for s in spread_out)
    return (f" Your runs at {said} spread too widely to read: some copies ran from a cache, some did "
            f"not, so these sizes show neither a cliff nor its absence.")


def _num(s):
    try:
        return float(s)
    except (TypeError, ValueError):
        return None


def _steps(clean: dict, ranges: dict, high: float, low: float) -> bool:
    """Whether ``high``'s GB/s is STEP x ``low``'s and above its range (when both were repeated)."""
    if clean[high] < STEP * clean[low]:
        return False
    if high in ranges and low in ranges:
        return ranges[high][0] > ranges[low][1]
    return True


def _label(size: float, llc: int | None, cliff: bool) -> str:
    if not llc:
        return ""
    if fits(size, llc):
        return "fits in the cache" if cliff else "fits in the cache, no faster here"
    return "main memory" if size * MIB >= MEMORY_MULTIPLE * llc else "past the cache"


def _fixed_cost(clean: dict, sizes: list, threads: int | None, device_type: str) -> str:
    """A clause when the smallest copies took about as long as larger ones; else ""."""
    a, b = sizes[0], sizes[1]
    ta, tb = _copy_us(a, clean[a]), _copy_us(b, clean[b])
    if tb >= ta * (b / a) ** FIXED_COST_POWER:
        return ""
    who = (f"waking torch's {threads} threads" if threads and threads > 1 and device_type == "cpu"
           else "launching the copy")
    return (f"a {_mib(a)} copy took {ta:,.0f} us and a {_mib(b)} one {tb:,.0f} us, so at small sizes "
            f"a fixed cost per copy ({who}, first touch of fresh pages, other programs on a busy "
            f"machine) sets the time, not the bytes")


def _reasons(clean: dict, sizes: list, llc: int | None, device_type: str, threads: int | None) -> list:
    reasons = []
    fixed = _fixed_cost(clean, sizes, threads, device_type)
    if fixed:
        reasons.append(fixed + (" (torch.set_num_threads(1) before the sweep shows "
                                            "the cache more plainly)" if threads and threads > 1 else ""))
    if llc:
        inside = [s for s in sizes if fits(s, llc)]
        if not inside:
            reasons.append(f"none of your sizes fits twice in the {llc / MIB:g} MiB last-level cache: "
                           f"sweep smaller buffers")
        else:
            reasons.append(f"{len(inside)} of your {len(sizes)} sizes fit{'s' if len(inside) == 1 else ''} "
                           f"in the {llc / MIB:g} MiB last-level cache" + (", so most of the sweep never left it"
                                                                            if len(inside) * 2 > len(sizes) else ""))
        if sizes[-1] * MIB < MEMORY_MULTIPLE * llc:
            reasons.append(f"your largest buffer is only {sizes[-1] * MIB / llc:.2g}x the cache, short "
                           f"of the {MEMORY_MULTIPLE}x that streams from main memory")
    else:
        reasons.append("the last-level cache size is not known here, so no size is marked as in it")
    if device_type == "cpu":
        reasons.append("a CPU's hardware prefetchers stream a sequential copy from main memory "
                       "nearly as fast as the cache serves it, so its cliff is shallow")
        if threads:
            reasons.append(f"with {threads} thread{'s' if threads > 1 else ''} the copy moves what "
                           f"{threads} core{'s' if threads > 1 else ''} can, in the cache and out of it alike")
    return reasons

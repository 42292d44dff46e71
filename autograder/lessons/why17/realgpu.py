"""The why17 real-GPU checks: the six verdicts from figures measured on this machine's GPU.

The child (realgpu_pair.py, copied into the sandbox by autograder/grading/real_gpu.py) measures the
student's functions and the reference in one process, interleaved; ``judge`` turns those figures
into the six verdicts as ratios of medians, with wider tolerances than the simulator's (real
timings are noisy). What a real GPU can and cannot show, per check (the simulator isolates each
mistake with its settings; a real GPU has none, so here each verdict reads one ratio):

    sync_present          student / reference GB/s far above 1 and no byte or unit factor explains it
    bytes_counted_twice   student / reference GB/s explained by a byte-count factor (0.5, 2)
    units_gb_per_s        ... or by a units factor (1e9, 1e3, GiB/s, ms as s, ...)
    warmup_present        the student's first copy in a fresh process / its later copies
    buffer_exceeds_cache  measured_bandwidth's largest tensor >= 4x L2 (watched aten ops), and
                          the student's small/large GB/s over the reference's (the cache cliff)
    flops_counted_2n3     student / reference TFLOP/s explained by a FLOP-count or units factor

What the engine asks of this module (autograder/core/lesson.py): PAIR, MODULES, measure, judge.
"""
from __future__ import annotations

import statistics
from pathlib import Path

from autograder.lessons.why17 import realgpu_pair
from shared.lessons.why17.gpu import factors, rubric
from shared.simgpu.judging import Verdict
from shared.simgpu.ratios import explain, fmt_ratio

#: The script the engine puts in the reference's child (``device_info``), the student modules
#: measured, and how: ``measure(student, reference, device, **options)``.
PAIR = Path(realgpu_pair.__file__)
MODULES = realgpu_pair.MODULES
measure = realgpu_pair.measure
#: Real-GPU ratios within this factor of an explained ratio count as that ratio (medians of
#: interleaved pairs on a busy GPU agree to a few percent; the factors are >= 2 apart).
TOLERANCE = 1.15
#: Student / reference GB/s above this that no factor explains: the clock stopped early.
SYNC_MAX = 1.5
#: First copy over later copies must be at least this (as the simulator's LIMITS.warmup_min).
WARMUP_MIN = rubric.LIMITS.warmup_min
#: The cache cliff: student's small/large over the reference's must be at least this.
CLIFF_MIN = rubric.LIMITS.cliff_min


def _median_ratio(pairs: list) -> float | None:
    """Median of student / reference over pairs where both are positive numbers."""
    ratios = [s / r for r, s in pairs if r and s and r > 0 and s > 0]
    return statistics.median(ratios) if ratios else None


def _no_value(check: str, m: dict, key: str, what: str) -> Verdict:
    line = m["errors"].get(key) or m["errors"].get("reference") or f"{what} returned no positive number"
    return Verdict(check, False, f"on this GPU: {line}.")


def judge(m: dict) -> dict[str, Verdict]:
    """The six verdicts from ``realgpu_pair.measure``'s figures ``m``, by check id."""
    out = {}
    dev = m.get("device", "this GPU")
    r = _median_ratio(m["large_pairs"])
    if r is None:
        for check in ("sync_present", "bytes_counted_twice", "units_gb_per_s"):
            out[check] = _no_value(check, m, "copy", "copy_bandwidth")
    else:
        head = f"on the {dev}, copy_bandwidth reads {fmt_ratio(r)} the reference GB/s (medians, interleaved)"
        explained = explain(r, factors.BYTE_FACTORS, factors.GBS_UNITS, TOLERANCE)
        no_sync = explained is None and r > SYNC_MAX
        out["sync_present"] = Verdict("sync_present", not no_sync, (
            f"{head}, more than any byte count or unit explains: the clock stopped before the GPU "
            "finished. Reread: Break It, Forget to synchronize.") if no_sync else
            f"{head}: not above what the copies can do, so it waits for the device.", r)
        count, unit = explained or (None, None)
        bad_count = count not in (None, 1.0) or (explained is None and 0.3 <= r <= SYNC_MAX)
        out["bytes_counted_twice"] = Verdict("bytes_counted_twice", not bad_count, (
            f"{head}: {factors.BYTE_FACTORS[count]}. Reread: Break It, Count bytes once."
            if count not in (None, 1.0) else
            f"{head}, which no byte count or unit explains. Reread: Build It, bw.py step 4.")
            if bad_count else f"{head}: the gap is the clock, not the byte count (see sync_present)."
            if no_sync else f"{head}: each copy counted as read + write.", r)
        bad_unit = unit not in (None, 1.0) or (explained is None and r < 0.3)
        out["units_gb_per_s"] = Verdict("units_gb_per_s", not bad_unit, (
            f"{head}: {factors.GBS_UNITS[unit]}. Reread: Build It, bw.py (units: GB = 1e9 bytes)."
            if unit not in (None, 1.0) else f"{head}: orders of magnitude low; check the units.")
            if bad_unit else f"{head}: the gap is the clock, not the unit (see sync_present)."
            if no_sync else f"{head}: in GB/s.", r)
    warm = [w for w in m["warm"] if w and w > 0]
    if not m["cold"] or not warm:
        out["warmup_present"] = _no_value("warmup_present", m, "copy", "copy_bandwidth")
    else:
        w = m["cold"] / statistics.median(warm)
        ok = w >= WARMUP_MIN
        out["warmup_present"] = Verdict("warmup_present", ok, (
            f"on the {dev}, the first copy_bandwidth call in a fresh process reads {fmt_ratio(w)} "
            "the GB/s of later calls" + ("." if ok else ": the timed loop includes first-use costs. "
                                         "Reread: Build It, bw.py step 2 (warm up).")), w)
    out["buffer_exceeds_cache"] = _cache_verdict(m, dev)
    f = _median_ratio(m["matmul_pairs"])
    if f is None:
        out["flops_counted_2n3"] = _no_value("flops_counted_2n3", m, "matmul", "matmul_tflops")
    else:
        head = f"on the {dev}, matmul_tflops reads {fmt_ratio(f)} the reference TFLOP/s"
        explained = explain(f, factors.FLOP_FACTORS, factors.TFLOPS_UNITS, TOLERANCE)
        why = ("no FLOP count or unit explains it" if explained is None else
               "; ".join(x for x in (factors.FLOP_FACTORS[explained[0]], factors.TFLOPS_UNITS[explained[1]]) if x))
        ok = explained == (1.0, 1.0)
        out["flops_counted_2n3"] = Verdict("flops_counted_2n3", ok, f"{head}." if ok else
                                           f"{head}: {why}. Reread: The Idea, Arithmetic intensity.", f)
    return out


def _cache_verdict(m: dict, dev: str) -> Verdict:
    if m["measured_bytes"] is None:
        return _no_value("buffer_exceeds_cache", m, "measured", "measured_bandwidth")
    times = m["measured_bytes"] / m["l2_bytes"]
    if times < rubric.LIMITS.cache_multiple:
        return Verdict("buffer_exceeds_cache", False,
                       f"on the {dev}, measured_bandwidth's largest buffer is {fmt_ratio(times)} the L2 "
                       f"(needs at least {rubric.LIMITS.cache_multiple}x). Reread: Break It, Tiny buffers.", times)
    small, large = _median_ratio(m["small_pairs"]), _median_ratio(m["large_pairs"])
    if small is None or large is None:
        return _no_value("buffer_exceeds_cache", m, "copy", "copy_bandwidth")
    cliff = small / large      # (student small / ref small) / (student large / ref large)
    ok = cliff >= CLIFF_MIN
    return Verdict("buffer_exceeds_cache", ok,
                   f"on the {dev}, measured_bandwidth's buffer is {times:.1f}x the L2; copy_bandwidth's "
                   f"cache cliff is {fmt_ratio(cliff)} the reference's" +
                   ("." if ok else ": does it honour n_bytes? Reread: Break It, Tiny buffers."), cliff)

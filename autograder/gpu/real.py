"""The real-GPU path of ``grade --device cuda``: the six GPU sanity checks on this machine's GPU.

The child (autograder/runtime/realgpu_pair.py) measures the student's functions and the reference in one
process, interleaved; ``judge`` turns those figures into the six verdicts as ratios of medians,
with wider tolerances than the simulator's (real timings are noisy). Course decision: these
tests are INFORMATIONAL (max_score 0, name "[<check>/cuda]"); the simulated checks stay the
graded ones, so a submission's score is the same on any machine. Without a CUDA GPU, ``probe``
says so in one line and grading goes on with the simulated device only.

What a real GPU can and cannot show, per check (the simulator isolates each mistake with its
knobs; a real GPU has no knobs, so here each verdict reads one ratio):
    sync_present          student / reference GB/s far above 1 and no byte or unit factor explains it
    bytes_counted_twice   student / reference GB/s explained by a byte-count factor (0.5, 2)
    units_gb_per_s        ... or by a units factor (1e9, 1e3, GiB/s, ms as s, ...)
    warmup_present        the student's first copy in a fresh process / its later copies
    buffer_exceeds_cache  measured_bandwidth's largest tensor >= 4x L2 (watched torch calls), and
                          the student's small/large GB/s over the reference's (the cache cliff)
    flops_counted_2n3     student / reference TFLOP/s explained by a FLOP-count or units factor
"""
from __future__ import annotations

import functools
import math
import shutil
import statistics
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

from shared.lessons.why17.gpu import factors, rubric
from shared.simgpu.judging import Verdict
from shared.simgpu.ratios import fmt_ratio

#: Real-GPU ratios within this factor of an explained ratio count as that ratio (medians of
#: interleaved pairs on a busy GPU agree to a few percent; the factors are >= 2 apart).
TOLERANCE = 1.15
#: Student / reference GB/s above this that no factor explains: the clock stopped early.
SYNC_MAX = 1.5
#: First copy over later copies must be at least this (as the simulator's WARMUP_MIN).
WARMUP_MIN = rubric.WARMUP_MIN
#: The cache cliff: student's small/large over the reference's must be at least this.
CLIFF_MIN = rubric.CLIFF_MIN
#: CUDA reserves tens of GiB of virtual address space: the course's address-space limit would
#: stop the context from starting, so the real-GPU child gets this one (MiB).
ADDRESS_SPACE_MB = 2**20
#: Wall clock for the one measuring call, seconds (copies of 8x L2, matmuls at 4096, 3 rounds).
CALL_TIMEOUT_S = 300.0
NO_GPU = ("--device cuda: no CUDA GPU on this machine (torch.cuda.is_available() is False); "
          "the GPU checks ran on the simulated device only, as with --device sim.")


@functools.lru_cache(maxsize=None)
def probe(python: str = sys.executable) -> str | None:
    """None when torch sees a CUDA GPU here; otherwise the one line saying it does not. Asked in a
    fresh interpreter (the grader does not import torch) once per process: grade-all asks per student."""
    try:
        done = subprocess.run([python, "-c", "import sys, torch; sys.exit(0 if torch.cuda.is_available() else 3)"],
                              capture_output=True, timeout=180)
    except (OSError, subprocess.TimeoutExpired):
        return NO_GPU
    return None if done.returncode == 0 else NO_GPU


def _median_ratio(pairs: list) -> float | None:
    """Median of student / reference over pairs where both are positive numbers."""
    ratios = [s / r for r, s in pairs if r and s and r > 0 and s > 0]
    return statistics.median(ratios) if ratios else None


def _explain(ratio: float, counts: dict, units: dict) -> tuple[float, float] | None:
    """(count factor, unit factor) whose product is within TOLERANCE of ``ratio``, or None."""
    best = None
    for c in counts:
        for u in units:
            off = abs(math.log(ratio / (c * u)))
            if off <= math.log(TOLERANCE) and (best is None or off < best[0]):
                best = (off, c, u)
    return None if best is None else best[1:]


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
        explained = _explain(r, factors.BYTE_FACTORS, factors.GBS_UNITS)
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
        explained = _explain(f, factors.FLOP_FACTORS, factors.TFLOPS_UNITS)
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
    if times < rubric.CACHE_MULTIPLE:
        return Verdict("buffer_exceeds_cache", False,
                       f"on the {dev}, measured_bandwidth's largest buffer is {fmt_ratio(times)} the L2 "
                       f"(needs at least {rubric.CACHE_MULTIPLE}x). Reread: Break It, Tiny buffers.", times)
    small, large = _median_ratio(m["small_pairs"]), _median_ratio(m["large_pairs"])
    if small is None or large is None:
        return _no_value("buffer_exceeds_cache", m, "copy", "copy_bandwidth")
    cliff = small / large      # (student small / ref small) / (student large / ref large)
    ok = cliff >= CLIFF_MIN
    return Verdict("buffer_exceeds_cache", ok,
                   f"on the {dev}, measured_bandwidth's buffer is {times:.1f}x the L2; copy_bandwidth's "
                   f"cache cliff is {fmt_ratio(cliff)} the reference's" +
                   ("." if ok else ": does it honour n_bytes? Reread: Break It, Tiny buffers."), cliff)


# ---------------------------------------------------------------- the grader's side
def prepare(student_dir: Path, reference_dir: Path) -> Path:
    """A folder for the real-GPU child: the student's bw.py/flops.py, the reference under its
    private names, and the measuring module. The caller removes it."""
    folder = Path(tempfile.mkdtemp(prefix="grader-cuda-"))
    for module in ("bw", "flops"):
        src = Path(student_dir) / f"{module}.py"
        if src.is_file() and not src.is_symlink():
            shutil.copy2(src, folder / src.name)
    from autograder.runtime import realgpu_pair

    for module, name in realgpu_pair.REFERENCE_NAMES.items():
        shutil.copy2(Path(reference_dir) / f"{module}.py", folder / f"{name}.py")
    shutil.copy2(realgpu_pair.__file__, folder / "grader_realgpu_pair.py")
    return folder


def measure_in_sandbox(student_dir: Path, reference_dir: Path, limits, **options) -> dict:
    """``realgpu_pair.run(**options)`` in a sandboxed child (the course's limits, but room for
    CUDA's address space); raises StudentError when it does not finish."""
    from autograder.sandbox.parent import Sandbox

    folder = prepare(student_dir, reference_dir)
    box = Sandbox(folder, replace(limits, memory_limit_mb=ADDRESS_SPACE_MB), preload=("torch",),
                  simgpu=False, label="your code with the reference on the GPU")
    try:
        m, _trace = box.call("grader_realgpu_pair", "run", kwargs=options, timeout_s=CALL_TIMEOUT_S)
        m["reference_left"] = sorted(p.name for p in box.child.workdir.glob("grader_ref_*"))
        return m
    finally:
        box.close()
        shutil.rmtree(folder, ignore_errors=True)


def tests_for(student_dir: Path, reference_dir: Path, limits, make_entry) -> tuple[list[dict], str]:
    """(informational results tests '[<check>/cuda]', a line for the overview) on the real GPU.

    ``make_entry(check_id, passed, message)`` builds one results test (grade.py knows the task
    and title). Without a GPU: no tests, and the NO_GPU line.
    """
    reason = probe()
    if reason:
        return [], reason
    from autograder.core.errors import StudentError

    try:
        m = measure_in_sandbox(student_dir, reference_dir, limits)
        found = judge(m)
    except StudentError as exc:
        return [], f"--device cuda: the real-GPU measurement did not finish ({exc}); graded on the simulated device."
    if m.get("device") == "cpu":   # the sandboxed child saw no GPU (its /dev): do not judge a CPU
        return [], ("--device cuda: the sandboxed child saw no CUDA GPU (torch.cuda.is_available() "
                    "was False there); graded on the simulated device only.")
    tests = [make_entry(f"{check}/cuda", v.passed, v.message) for check, v in found.items()]
    return tests, (f"Real-GPU checks on the {m.get('device')}: informational ([<check>/cuda], 0 points); "
                   "the score comes from the simulated GPU.")

"""The GPU sanity checks' logic, in one place for the grader and the student command.

Each verdict runs one of the student's timing functions on the simulated GPU through a
``Runner`` (the grader adapts its sandboxed Context; the student command runs the code
in-process) and compares it, as a ratio, with the same code under another simulator setting or
with the reference on the same device. The settings (``configs``) isolate each mistake so that
it fails only its own check:

    sync_present          real (asynchronous) launches vs launches that each wait and cost
                          nothing: the ratio is ~1 only when the code waits for the device
    warmup_present        one-time first-use cost on vs off: the ratio is 1 only with a warm-up
    bytes_counted_twice   student / reference GB/s with launches waiting: 0.5 means bytes once
    units_gb_per_s        ... and a units factor (1e9 bytes/s, 1e3 MB/s, GiB/s, ms as s, ...)
    buffer_exceeds_cache  measured_bandwidth: a buffer >= 4x L2, and a returned value no faster
                          than the device's memory; copy_bandwidth: the reference's cache cliff
    flops_counted_2n3     student / reference TFLOP/s: 0.5 means n**3 was counted
    within_peak           measured_peak_tflops: compute-bound, and never above the device's peak

Every check first runs its function on the seeded device and on the probe's, scaled from it by
factors drawn from the seed (``configs``, ``_follows_device``): a number that does not follow the
work it timed (hard-coded, computed from anything but a measurement, or timing nothing) fails
every check, whatever else it gets right. Each setting runs in a process of its own, in an order
drawn from the seed, so no count of its own calls tells the code which device it is on (the
grader's sandbox starts a child per setting; ``_Session.prefetch`` asks for every call of a
module setting by setting). What ran between the clock readings (``trace["timed"]``) shows some
slips directly (``diagnose``): each is charged once, on the check that names it.

A check judges every timing function where its mistake can happen (``JUDGES``); its id is the
bare check name for the function the lesson's Break It names (``PRIMARY``) and
``<check>.<function>`` for the others (``ids()``). A function that calls another one
(bandwidth_sweep and measured_bandwidth call copy_bandwidth in the reference) is charged once:
its check passes, pointing at the other's, when that one fails with the same mistake (``BASE``).

Messages name the mistake, the ratio seen and the lesson section to reread; never an expected
value beyond the ratio.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass
from typing import Any, Callable, Protocol

from shared.simgpu.events import NOT_COMPLETED
from shared.simgpu.profile import config
from shared.simgpu.ratios import BYTE_FACTORS, FLOP_FACTORS, GBS_UNITS, RATIO_TOLERANCE, TFLOPS_UNITS, fmt_ratio  # noqa: F401 (re-exported)
from shared.simgpu.ratios import explain as _explain
from shared.simgpu.ratios import number as _number
from shared.simgpu.ratios import single as _single

MIB = 2**20
#: Asynchronous over waiting GB/s must lie within these bounds: correct code reads ~1 (the first
#: launch's latency); above, the clock stopped early; below, queued work (the warm-up) was timed.
SYNC_BOUNDS = (0.97, 1.1)
#: GB/s with the one-time cost over GB/s without it must be at least this.
WARMUP_MIN = 0.9
#: measured_bandwidth's buffer must be at least this many times the L2 (STREAM's rule).
CACHE_MULTIPLE = 4
#: The student's cache cliff (small/large GB/s) over the reference's must be at least this.
CLIFF_MIN = 0.75
#: A returned bandwidth or peak above this fraction of the device's spec cannot be measured.
SPEED_OF_LIGHT = 1.0
#: measured_peak_tflops below this fraction of the reference's: the n picked is not compute-bound.
PEAK_MIN = 0.5
#: Timed iterations the checks ask for: few, since the simulator is deterministic.
ITERS = 10
#: The probe's device is the seeded one with bandwidth and peak each scaled by a factor drawn
#: with the seed from one of these ranges (a faster device or a slower one): both factors on the
#: same side of 1, so that a matmul compute-bound on the seeded device stays compute-bound. A
#: measurement follows both (``_follows_device``, within FOLLOW_TOLERANCE).
SCALES = ((1.5, 2.5), (0.4, 0.7))
FOLLOW_TOLERANCE = 1.1
#: Host seconds per launch in the checks' asynchronous setting: a fast host, so that kernels
#: shorter than a real launch (a tiny buffer, a chunked copy) are not launch-bound there and a
#: missing synchronize is the only thing that moves the ratio.
ASYNC_LAUNCH_S = 1e-7
#: The share of timed kernels' device time that is launch latency, above which they are launch-bound.
LAUNCH_BOUND_SHARE = 0.5
#: Bytes filled in a timed region, as a share of the bytes its copies wrote, that slow the copies
#: it reports (a fill inside the timed loop).
FILL_SHARE = 0.05
#: Matrix side of the matmul checks, elements (compute-bound on every profile's bf16 peak).
MATMUL_N = 4096

#: The six checks of the design (the real-GPU path judges these, on copy_bandwidth and matmul).
CHECK_IDS = ("sync_present", "bytes_counted_twice", "buffer_exceeds_cache", "warmup_present",
             "flops_counted_2n3", "units_gb_per_s")
#: The student's timing functions, by module.
BW = ("copy_bandwidth", "bandwidth_sweep", "measured_bandwidth")
FLOPS = ("matmul_tflops", "measured_peak_tflops")
MODULE = {**{f: "bw" for f in BW}, **{f: "flops" for f in FLOPS}}
#: Every check and the functions it judges, the lesson's own first.
JUDGES = {
    "sync_present": ("copy_bandwidth", "bandwidth_sweep", "measured_bandwidth", "matmul_tflops",
                     "measured_peak_tflops"),
    "warmup_present": ("copy_bandwidth", "bandwidth_sweep", "measured_bandwidth", "matmul_tflops",
                       "measured_peak_tflops"),
    "bytes_counted_twice": ("copy_bandwidth", "bandwidth_sweep"),
    "units_gb_per_s": ("copy_bandwidth", "bandwidth_sweep"),
    "buffer_exceeds_cache": ("measured_bandwidth", "copy_bandwidth"),
    "flops_counted_2n3": ("matmul_tflops",),
    "within_peak": ("measured_peak_tflops",),
}
#: The function whose check carries the bare id.
PRIMARY = {check: functions[0] for check, functions in JUDGES.items()}
#: A function that usually calls another: one mistake there is charged once, on the other.
BASE = {"bandwidth_sweep": "copy_bandwidth", "measured_bandwidth": "copy_bandwidth",
        "measured_peak_tflops": "matmul_tflops"}
#: Lesson sections named in messages.
SYNC_LESSON = "Reread: Break It, Forget to synchronize."
CACHE_LESSON = "Reread: Break It, Tiny buffers."


def check_id(check: str, function: str) -> str:
    """'sync_present' for the primary function, else 'sync_present.matmul_tflops'."""
    return check if PRIMARY[check] == function else f"{check}.{function}"


def ids() -> dict[str, tuple[str, str]]:
    """Every check instance: id -> (check, function), in JUDGES order."""
    return {check_id(c, f): (c, f) for c, functions in JUDGES.items() for f in functions}


@dataclass(frozen=True)
class Verdict:
    """One check's outcome: ``passed``, a short ``message`` and the ratio it judged (or None)."""

    check: str
    passed: bool
    message: str
    ratio: float | None = None


class Runner(Protocol):
    """How a verdict runs code: the grader's sandbox, or the student's own process."""

    def student(self, module: str, function: str, *args, sim: dict, **kwargs) -> Any:
        """The student's ``module.function(*args, **kwargs)`` on the simulated device ``sim``."""

    def student_traced(self, module: str, function: str, *args, sim: dict, **kwargs) -> tuple[Any, dict]:
        """As ``student``, plus the simulator's trace of the call."""

    def reference(self, module: str, function: str, *args, sim: dict, **kwargs) -> Any:
        """What a correct ``module.function`` reads on the same device."""

    # Optional: ``expect(module, settings)``, the simulated-GPU configs the calls of ``module``
    # will come on, in order (the grader starts each setting's process ahead of its turn).


# ---------------------------------------------------------------- settings
def configs(profile: str, seed: int | None) -> dict:
    """The simulator settings the checks use.

    ideal:  the seeded device; launches wait; launches, allocations and syncs cost the host
            nothing, a clock read 1 ns (the resolution of perf_counter_ns); no first-use cost:
            the timer sees exactly the device's time, whatever the code's style (chunks,
            repeats, Timer)
    probe:  ideal on a device scaled by ``factors["probe"]``: a measurement follows them
    async:  the seeded device with asynchronous launches (ASYNC_LAUNCH_S of host time each)
    cold:   ideal, plus the one-time cost of the first op of each kind
    factors: setting -> {"bw": x, "peak": y}, the probe's drawn from SCALES with the seed
    order:  the settings in the order their processes run, drawn from the seed
    """
    ideal = config(profile, seed, sync_launches=True, first_use=False, launch_overhead_s=0.0,
                   alloc_s=0.0, sync_overhead_s=0.0, clock_read_s=1e-9)
    rng = random.Random(f"simgpu-settings\0{seed}")
    low, high = SCALES[rng.randrange(len(SCALES))]
    probe = {"bw": round(rng.uniform(low, high), 3), "peak": round(rng.uniform(low, high), 3)}
    out: dict = {
        "ideal": ideal,
        "probe": dict(ideal, bw_gbs=round(ideal["bw_gbs"] * probe["bw"], 1),
                      peak_tflops=round(ideal["peak_tflops"] * probe["peak"], 1)),
        "async": dict(ideal, sync_launches=False, launch_overhead_s=ASYNC_LAUNCH_S),
        "cold": dict(ideal, first_use=True),
    }
    out["factors"] = {"probe": {"bw": out["probe"]["bw_gbs"] / ideal["bw_gbs"],
                                "peak": out["probe"]["peak_tflops"] / ideal["peak_tflops"]}}
    order = [name for name in out if name != "factors"]
    rng.shuffle(order)
    out["order"] = order
    return out


def factor(s: "_Session", setting: str, function: str) -> float:
    """How many times the seeded device's bandwidth (or peak, for a flops function) ``setting``'s is."""
    return s.cfgs["factors"][setting]["bw" if MODULE[function] == "bw" else "peak"]


def sizes(cfg: dict) -> tuple[int, int]:
    """(small, large) copy sizes in bytes: an eighth of the L2 and eight times it, whole MiB."""
    l2 = cfg["l2_bytes"]
    return max(MIB, l2 // 8 // MIB * MIB), -(-8 * l2 // MIB) * MIB


def _not_a_number(check: str, function: str, value, unit: str) -> Verdict:
    return Verdict(check, False, f"{function} returned {value!r:.60}, not a positive number of {unit}. "
                                 "Reread: Build It.")


class _Session:
    """One verdict's view of the runner: every call cached by its arguments and setting.

    The simulator is deterministic, so a call repeated with the same setting gives the same
    value; several checks share the same calls (and ``memo``, when the runner has one, shares
    them across checks, with the verdicts for charging a mistake once).
    """

    def __init__(self, run: Runner, profile: str, seed: int | None):
        self.run, self.profile, self.seed = run, profile, seed
        self.memo = getattr(run, "memo", None)
        if self.memo is None:
            self.memo = {}
        key = ("configs", profile, seed)
        if key not in self.memo:
            self.memo[key] = configs(profile, seed)
        self.cfgs = self.memo[key]
        self.small, self.large = sizes(self.cfgs["ideal"])

    def _cached(self, key, fn):
        if key not in self.memo:
            try:
                self.memo[key] = (True, fn())
            except Exception as exc:  # noqa: BLE001 - re-raised to every check that asks
                self.memo[key] = (False, exc)
        ok, value = self.memo[key]
        if not ok:
            raise value
        return value

    def measure(self, function: str, setting: str, size: int | None = None) -> tuple[Any, float | None, dict]:
        """(raw value, value as a number or None, trace) of ``function`` under ``setting``."""
        size = size or self.large
        cfg = self.cfgs[setting]
        module = MODULE[function]
        if function == "copy_bandwidth":
            args, kwargs = (size,), {"iters": ITERS}
        elif function == "bandwidth_sweep":
            args, kwargs = ((size // MIB,),), {"iters": ITERS}
        elif function == "matmul_tflops":
            args, kwargs = (MATMUL_N,), {"iters": ITERS}
        else:
            args, kwargs = (), {}
        key = ("student", self.profile, self.seed, setting, function, args)
        value, trace = self._cached(key, lambda: self.run.student_traced(module, function, *args, sim=cfg, **kwargs))
        raw = value
        if function == "bandwidth_sweep":
            raw = _sweep_entry(value, size // MIB)
        return raw, _number(raw), trace or {}

    def prefetch(self, module: str) -> None:
        """Every call the checks make of ``module``'s functions, setting by setting in the seeded
        order (each setting is a process of its own in the grader): later asks hit the memo.
        Errors are kept for the check that asks."""
        key = ("prefetched", self.profile, self.seed, module)
        if key in self.memo:
            return
        self.memo[key] = True
        expect = getattr(self.run, "expect", None)
        if expect is not None:
            expect(module, [self.cfgs[setting] for setting in self.cfgs["order"]])
        functions = [f for f in MODULE if MODULE[f] == module]
        raised: set[str] = set()
        for setting in self.cfgs["order"]:
            # On the seeded device the functions that call another run first: a number measured
            # once and returned again later in the process (a cache) then times nothing there.
            for function in reversed(functions) if setting == "ideal" else functions:
                if function in raised:
                    continue      # a function that raised is not asked again ahead of a check
                sizes = (self.small, self.large) if (function, setting) == ("copy_bandwidth", "ideal") else (None,)
                for size in sizes:
                    try:
                        self.measure(function, setting, size)
                    except Exception:  # noqa: BLE001 - cached; re-raised to the check that asks
                        raised.add(function)

    def reference(self, function: str, setting: str, *args, **kwargs) -> float:
        key = ("reference", self.profile, self.seed, setting, function, args, tuple(sorted(kwargs.items())))
        cfg = self.cfgs[setting]
        return float(self._cached(key, lambda: self.run.reference(MODULE[function], function, *args,
                                                                   sim=cfg, **kwargs)))

    def verdict(self, vid: str) -> Verdict:
        """The verdict of check instance ``vid`` (cached), for charging a mistake once."""
        return self._cached(("verdict", self.profile, self.seed, vid),
                            lambda: VERDICTS[vid](self.run, self.profile, self.seed))


def _sweep_entry(sweep, mib: int):
    """bandwidth_sweep's value at ``mib`` (an int key, or the only entry), else the dict itself."""
    if isinstance(sweep, dict):
        if mib in sweep:
            return sweep[mib]
        if len(sweep) == 1:
            return next(iter(sweep.values()))
    return sweep


def _unit(function: str) -> str:
    return "GB/s" if MODULE[function] == "bw" else "TFLOP/s"


def _work_rate(function: str, trace: dict) -> float:
    """The timed region's work per second: bytes its copies and transfers wrote (bw) or matmul
    FLOPs (flops) over the seconds between its first and last clock reading; 0 when it timed none."""
    timed = trace.get("timed") or {}
    seconds = timed.get("duration_s") or 0.0
    work = (timed.get("copy_bytes", 0) + timed.get("transfer_bytes", 0) if MODULE[function] == "bw"
            else timed.get("matmul_flops", 0.0))
    return work / seconds if seconds > 0 else 0.0


def _follows_device(s: _Session, check: str, function: str) -> Verdict | None:
    """A failing Verdict when ``function``'s number is not a measurement of the work it timed,
    else None.

    The probe's device runs the same work at other speeds: the timed region (from the first clock
    reading to the last, ``trace["timed"]``) does its work at another rate there, and a
    measurement's number moves with that rate. A hard-coded or cached answer reads the same on every
    device; one whose timed work does not depend on the device's speed (launch-bound copies of a
    few bytes, a copy PyTorch skips, no work at all) measures nothing the checks can judge.
    """
    first, a, trace_a = s.measure(function, "ideal")
    second, b, trace_b = s.measure(function, "probe")
    if a is None or b is None:
        return _not_a_number(check, function, first if a is None else second, _unit(function))
    scale = factor(s, "probe", function)
    what = "memory bandwidth" if MODULE[function] == "bw" else "peak"
    head = (f"{function} read {fmt_ratio(b / a)} the {_unit(function)} on a simulated GPU with "
            f"{scale:.2f}x the {what}")
    ra, rb = _work_rate(function, trace_a), _work_rate(function, trace_b)
    if ra <= 0 or rb <= 0 or abs(math.log(rb / ra)) <= math.log(FOLLOW_TOLERANCE):
        return Verdict(check, False,
                       f"{head}, and the work between its clock readings ran as fast on both: the "
                       "number does not follow the device, since it times nothing that depends on "
                       "the device's speed (no copy or matmul in it, no clock read around the "
                       "work, a copy PyTorch skips, or copies so small that launching them is all "
                       "that is timed). Time copies of the size asked. Reread: Build It, and Break "
                       "It, Tiny buffers.", b / a)
    ratio = (b / a) / (rb / ra)
    if abs(math.log(ratio)) <= math.log(FOLLOW_TOLERANCE):
        return None
    return Verdict(check, False,
                   f"{head}, while the work it timed ran {rb / ra:.2f}x as fast: the number does not "
                   "follow the device (hard-coded, cached, or not timing the work). Time the work "
                   "itself. Reread: Build It.", ratio)


# -------------------------------------------------- what the timed region shows
@dataclass(frozen=True)
class Diagnosis:
    """One slip the timed region shows, which makes the number a measure of something else than
    the checks compare: ``owner`` (a check id) is charged with ``message``; every other check of
    the function passes, pointing at it. ``kind`` names the slip; ``rate`` is what the timed work
    ran at (GB/s or TFLOP/s), which the returned number must agree with."""

    kind: str
    owner: str
    message: str
    rate: float
    scale: float = 1.0      # the work asked for over the work timed (a capped size reports that much more)
    work: float = 0.0       # the largest timed kernel's bytes or FLOPs


def _owner(function: str, *checks: str) -> str:
    """The id of the first of ``checks`` that judges ``function`` (else of the first check that does)."""
    judging = [c for c in checks if function in JUDGES[c]] or [c for c in JUDGES if function in JUDGES[c]]
    return check_id(judging[0], function)


def diagnose(s: _Session, function: str) -> Diagnosis | None:
    """The slip ``function``'s timed region shows on the seeded device, or None (cached).

    Host-link copies (a CPU tensor copied to or from the device), copies over fewer bytes of one
    buffer than the n_bytes asked (not launch-bound: a launch-bound copy does not follow the
    device and fails every check), matmuls smaller than the n asked, and launch-bound matmuls in
    measured_peak_tflops. A function that calls another with the same slip is charged there.
    """
    return s._cached(("diagnosis", s.profile, s.seed, function), lambda: _diagnose(s, function))


def _diagnose(s: _Session, function: str) -> Diagnosis | None:
    try:
        _raw, _x, trace = s.measure(function, "ideal")
    except Exception:  # noqa: BLE001 - the call's own failure is every check's verdict
        return None
    timed = trace.get("timed") or {}
    found = _slip(s, function, timed)
    base = BASE.get(function)
    other = diagnose(s, base) if base is not None else None
    if found is None and other is not None and other.kind == "small_matmuls" and timed.get("matmuls"):
        # measured_peak_tflops calling the capped matmul_tflops: the same matmuls, the same slip
        if timed["matmul_max_flops"] <= other.work * RATIO_TOLERANCE:
            seconds = timed["duration_s"] or 1.0
            rate = timed["matmul_flops"] / seconds / 1e12
            found = Diagnosis(other.kind, other.owner, "", rate, _cube_scale(s, function, rate), other.work)
    if found is not None and other is not None and other.kind == found.kind:
        return Diagnosis(found.kind, other.owner, f"{function} shows the same slip as {base}, "
                         f"charged once there ([{other.owner}]).", found.rate, found.scale, found.work)
    return found


def _slip(s: _Session, function: str, timed: dict) -> Diagnosis | None:
    seconds = timed.get("duration_s") or 0.0
    if seconds <= 0:
        return None
    if MODULE[function] == "bw":
        if timed.get("transfers") and not timed.get("copies"):
            return Diagnosis(
                "host_link", _owner(function, "buffer_exceeds_cache", "bytes_counted_twice"),
                f"{function} timed a copy between host and device memory: that measures the link "
                "(PCIe or NVLink-C2C), not the GPU's memory. Copy between two buffers on the GPU. "
                "Reread: Build It, bw.py.", timed["transfer_bytes"] / seconds / 1e9)
        if (function == "measured_bandwidth" and timed.get("copies")
                and timed.get("latency_share", 0) < LAUNCH_BOUND_SHARE):
            times = timed.get("copy_extent_bytes", 0) / s.cfgs["ideal"]["l2_bytes"]
            if times < CACHE_MULTIPLE:
                return Diagnosis(
                    "cache_sized", _owner(function, "buffer_exceeds_cache"),
                    f"{function} times copies over at most {fmt_ratio(times)} the L2 cache of one "
                    f"buffer (it needs at least {CACHE_MULTIPLE}x, read from torch.cuda."
                    "get_device_properties(...).L2_cache_size): the copy runs from the cache, not "
                    f"from main memory. {CACHE_LESSON}", 2 * timed["copy_bytes"] / seconds / 1e9)
        asked = None if function == "measured_bandwidth" else s.large
        extent = timed.get("copy_extent_bytes", 0)
        if (asked and timed.get("copies") and extent * RATIO_TOLERANCE < asked
                and timed.get("latency_share", 0) < LAUNCH_BOUND_SHARE):
            return Diagnosis(
                "short_copies", _owner(function, "buffer_exceeds_cache", "bytes_counted_twice"),
                f"{function} timed copies over {extent / MIB:.3g} MiB of one buffer when asked for "
                f"{asked / MIB:.3g} MiB, and reported them as the rate of the size asked: copy "
                f"buffers of n_bytes. {CACHE_LESSON}", 2 * timed["copy_bytes"] / seconds / 1e9,
                asked / extent)
        if timed.get("copies") and timed.get("fill_bytes", 0) >= FILL_SHARE * timed["copy_bytes"]:
            return Diagnosis(
                "extra_work", _owner(function, "bytes_counted_twice"),
                f"{function}'s timed region also fills buffers ({timed['fill_bytes'] / 2**30:.3g} GiB "
                "written besides the copies), so the copies look slower than they are: fill before "
                "the clock starts and time only the copies. Reread: Build It, bw.py step 4.",
                2 * timed["copy_bytes"] / seconds / 1e9)
        return None
    flops = timed.get("matmul_flops", 0.0)
    asked_flops = 2.0 * MATMUL_N**3
    if (function == "matmul_tflops" and timed.get("matmuls")
            and timed["matmul_max_flops"] * RATIO_TOLERANCE < asked_flops
            and timed.get("matmul_latency_share", 0) < LAUNCH_BOUND_SHARE):
        side = round(timed["matmul_max_flops"] / 2) ** (1 / 3)
        return Diagnosis(
            "small_matmuls", _owner(function, "flops_counted_2n3"),
            f"{function} timed matmuls of at most {timed['matmul_max_flops'] / 1e9:.3g} GFLOP each "
            f"(about n={side:.0f}) when asked for n={MATMUL_N}, and counted the FLOPs of the n "
            "asked: multiply matrices of the size asked. Reread: Build It, matmul_tflops.",
            flops / seconds / 1e12, asked_flops / timed["matmul_max_flops"], timed["matmul_max_flops"])
    if (function == "measured_peak_tflops" and timed.get("matmuls")
            and timed.get("matmul_latency_share", 0) >= LAUNCH_BOUND_SHARE):
        return Diagnosis(
            "launch_bound", _owner(function, "within_peak"),
            f"{function} times matmuls so small that launch latency is "
            f"{timed['matmul_latency_share']:.0%} of their time: too small to be compute-bound. "
            "Pick n in the thousands, past the ridge point. Reread: The roofline, the ridge point.",
            flops / seconds / 1e12)
    return None


def _cube_scale(s: _Session, function: str, rate: float) -> float:
    """The number over ``rate`` when it is (n / cap)**3 for whole n / cap (an n asked of the
    capped function that the caller picked), else 1."""
    _raw, x, _trace = s.measure(function, "ideal")
    if x is None or rate <= 0:
        return 1.0
    side = round((x / rate) ** (1 / 3))
    return side**3 if side >= 1 and abs(math.log(x / rate / side**3)) <= math.log(RATIO_TOLERANCE) else 1.0


def _agrees(s: _Session, function: str, diagnosis: Diagnosis) -> bool:
    """Whether ``function``'s number is the rate its timed work ran at, up to a byte or FLOP
    count and a unit: a diagnosed number must still be a measurement."""
    _raw, x, _trace = s.measure(function, "ideal")
    if x is None or diagnosis.rate <= 0:
        return False
    counts, units = (BYTE_FACTORS, GBS_UNITS) if MODULE[function] == "bw" else (FLOP_FACTORS, TFLOPS_UNITS)
    return any(_explain(x / (diagnosis.rate * scale), counts, units) is not None
               for scale in {1.0, diagnosis.scale})


# --------------------------------------------------------------- the checks
def sync_present(s: _Session, function: str) -> Verdict:
    """``function`` must wait for the device before reading the clock (Break It)."""
    check = check_id("sync_present", function)
    try:
        fast, a, _ = s.measure(function, "async")
    except Exception as exc:  # noqa: BLE001 - only the events error and a zero time are this check's
        if getattr(exc, "exc_type", type(exc).__name__) == "ZeroDivisionError":
            s.measure(function, "ideal")     # raises in the ideal setting too: that is its own error
            return Verdict(check, False,
                           f"{function} divided by a time of zero when launches are asynchronous: "
                           "the clock stopped before the device started, so it timed nothing. "
                           f"Synchronize before reading the clock. {SYNC_LESSON}", math.inf)
        if NOT_COMPLETED.split(" before")[0] not in str(exc):
            raise
        return Verdict(check, False,
                       f"{function} asked CUDA events for their elapsed time before the device "
                       "finished (PyTorch raises 'Both events must be completed'): call "
                       f"end.synchronize() or torch.cuda.synchronize() first. {SYNC_LESSON}")
    slow, b, _ = s.measure(function, "ideal")
    if a is None or b is None:
        return _not_a_number(check, function, fast if a is None else slow, _unit(function))
    ratio = a / b
    unit = _unit(function)
    if ratio > SYNC_BOUNDS[1]:
        return Verdict(check, False,
                       f"{function} reads {fmt_ratio(ratio)} more {unit} when launches are asynchronous "
                       "than when each launch waits: the clock stopped before the device finished, "
                       "so you timed how fast Python queues work. Synchronize before reading the "
                       f"clock. {SYNC_LESSON}", ratio)
    if ratio < SYNC_BOUNDS[0]:
        return Verdict(check, False,
                       f"{function} reads {fmt_ratio(ratio)} the {unit} it reads when each launch waits: "
                       "the clock started while earlier work (the warm-up) was still queued. "
                       "Synchronize before starting the clock too. Reread: Build It, step 3, "
                       f"and {SYNC_LESSON.removeprefix('Reread: ')}", ratio)
    return Verdict(check, True,
                   f"{function} waits for the device: asynchronous / waiting launches = {fmt_ratio(ratio)}.",
                   ratio)


def warmup_present(s: _Session, function: str) -> Verdict:
    """``function`` must warm up before timing: the first use pays one-time costs."""
    check = check_id("warmup_present", function)
    cold, a, _ = s.measure(function, "cold")
    warm, b, _ = s.measure(function, "ideal")
    if a is None or b is None:
        return _not_a_number(check, function, cold if a is None else warm, _unit(function))
    ratio = a / b
    if ratio < WARMUP_MIN:
        return Verdict(check, False,
                       f"{function} reads {fmt_ratio(ratio)} the {_unit(function)} on a device whose first "
                       "use of an operation pays a one-time start-up cost than on one where it does "
                       "not: the timed loop includes that first use. Run a few untimed iterations "
                       "first. Reread: Build It, step 2 (warm up).", ratio)
    return Verdict(check, True,
                   f"{function} warms up: with / without a one-time start-up cost = {fmt_ratio(ratio)}.",
                   ratio)


def _copy_ratio(s: _Session, function: str):
    """(student/reference GB/s at the large size, largest allocation / n_bytes asked, raw value)."""
    raw, x, trace = s.measure(function, "ideal")
    if x is None:
        return None, None, raw
    ref = s.reference("copy_bandwidth", "ideal", s.large, iters=ITERS)
    alloc = trace.get("largest_alloc_bytes") or s.large
    return x / ref, alloc / s.large, raw


def bytes_counted_twice(s: _Session, function: str) -> Verdict:
    """``function`` must count 2·n_bytes per copy (read + write), as STREAM does."""
    check = check_id("bytes_counted_twice", function)
    ratio, moved, raw = _copy_ratio(s, function)
    if ratio is None:
        return _not_a_number(check, function, raw, "GB/s")
    head = f"{function} reads {fmt_ratio(ratio)} the reference GB/s on the same simulated GPU"
    explained = _explain(ratio, BYTE_FACTORS, GBS_UNITS)
    if explained is None:
        other_size = abs(math.log(moved)) > math.log(RATIO_TOLERANCE)
        note = f" (your buffers are {moved:.3g}x the n_bytes asked for)" if other_size else ""
        warmups = [s.verdict(check_id("warmup_present", f)) for f in (function, BASE.get(function))
                   if f is not None and f in JUDGES["warmup_present"]]
        cold = next((w for w in warmups if not w.passed), None)
        if cold is not None:           # the clock started before the warm-up: charged there, once
            return Verdict(check, True, f"not judged here: {function}'s timed region holds its "
                                        f"warm-up, charged once in [{cold.check}].", ratio)
        if 0.3 <= ratio <= 3.5 or other_size:
            return Verdict(check, False,
                           f"{head}{note}, which no byte count or unit explains: copy buffers of "
                           "n_bytes, time only those copies and count 2·n_bytes per copy. Reread: "
                           "Build It, bw.py step 4, and Break It, Count bytes once.", ratio)
        return Verdict(check, True, f"{head}; the gap is a matter of units (see units_gb_per_s).", ratio)
    count, _unit_factor = explained
    if count != 1.0:
        return Verdict(check, False,
                       f"{head}: {BYTE_FACTORS[count]}. Reread: Break It, Count bytes once.", ratio)
    return Verdict(check, True, f"{function} counts each copy as read + write.", ratio)


def units_gb_per_s(s: _Session, function: str) -> Verdict:
    """``function`` must report GB/s: 1e9 bytes per second."""
    check = check_id("units_gb_per_s", function)
    ratio, moved, raw = _copy_ratio(s, function)
    if ratio is None:
        return _not_a_number(check, function, raw, "GB/s")
    head = f"{function} reads {fmt_ratio(ratio)} the reference GB/s on the same simulated GPU"
    # A buffer of another size than n_bytes (bytes_counted_twice's mistake) scales the ratio by
    # its size when the student counted n_bytes: either reading may be the one in GB/s.
    readings = [_explain(r, BYTE_FACTORS, GBS_UNITS) for r in (ratio, ratio * moved)]
    units = [e[1] for e in readings if e is not None]
    if 1.0 in units or (not units and 0.3 <= ratio <= 3.5):
        return Verdict(check, True, f"{function} reports GB/s (1e9 bytes/s).", ratio)
    if not units:
        return Verdict(check, False,
                       f"{head}: orders of magnitude off, so check the units: GB/s is bytes / "
                       "seconds / 1e9. Reread: Build It, bw.py.", ratio)
    return Verdict(check, False,
                   f"{head}: {GBS_UNITS[units[0]]}. GB/s is bytes / seconds / 1e9. Reread: Build It, "
                   "bw.py (units: GB = 1e9 bytes).", ratio)


def buffer_exceeds_cache(s: _Session, function: str) -> Verdict:
    """measured_bandwidth: a buffer >= 4x L2 and a value main memory can give; copy_bandwidth:
    the sweep shows the cache cliff."""
    if function == "copy_bandwidth":
        return _cache_cliff(s)
    check = check_id("buffer_exceeds_cache", function)
    cfg = s.cfgs["ideal"]
    l2 = cfg["l2_bytes"]
    raw, x, trace = s.measure(function, "ideal")
    timed = trace.get("timed") or {}
    biggest = timed.get("copy_extent_bytes") or trace.get("largest_alloc_bytes", 0)
    times = biggest / l2
    if times < CACHE_MULTIPLE:
        return Verdict(check, False,
                       f"{function} copies a buffer of at most {fmt_ratio(times)} the L2 cache "
                       f"(it needs at least {CACHE_MULTIPLE}x, read from "
                       "torch.cuda.get_device_properties(...).L2_cache_size): the copy runs from the "
                       f"cache, not from main memory. {CACHE_LESSON}", times)
    if x is None:
        return _not_a_number(check, function, raw, "GB/s")
    ratio = x / s.reference("copy_bandwidth", "ideal", s.large, iters=ITERS)
    explained = _single(_explain(ratio, BYTE_FACTORS, GBS_UNITS))
    spec_ratio = x / cfg["bw_gbs"]
    if explained in (None, (1.0, 1.0)) and spec_ratio > SPEED_OF_LIGHT:
        return Verdict(check, False,
                       f"{function} returned {fmt_ratio(spec_ratio)} the device's spec bandwidth, faster "
                       "than this device can move bytes: the buffer sat in the L2, or the clock was "
                       "read before the GPU finished. Return the rate of a buffer at least "
                       f"{CACHE_MULTIPLE}x the L2, not the best of a sweep. {CACHE_LESSON}", spec_ratio)
    return Verdict(check, True,
                   f"{function}'s buffer is {times:.1f}x the L2 and its rate is one main memory can give.",
                   spec_ratio)


def _cache_cliff(s: _Session) -> Verdict:
    check = check_id("buffer_exceeds_cache", "copy_bandwidth")
    s_small, a, trace_small = s.measure("copy_bandwidth", "ideal", s.small)
    s_large, b, _ = s.measure("copy_bandwidth", "ideal", s.large)
    if a is None or b is None:
        return _not_a_number(check, "copy_bandwidth", s_small if a is None else s_large, "GB/s")
    ref_cliff = s.reference("copy_bandwidth", "ideal", s.small, iters=ITERS) / \
        s.reference("copy_bandwidth", "ideal", s.large, iters=ITERS)
    ratio = (a / b) / ref_cliff
    if ratio < CLIFF_MIN:
        biggest = trace_small.get("largest_alloc_bytes", 0)
        launch = (trace_small.get("timed") or {}).get("latency_share", 0.0)
        if biggest > 1.02 * s.small:
            cause = (f"copy_bandwidth ignores n_bytes: its buffers were {biggest / s.small:.3g}x the "
                     "small size asked for")
        elif launch >= LAUNCH_BOUND_SHARE:
            cause = (f"its small copies are launch-bound ({launch:.0%} of their time is the fixed "
                     "cost of a launch): copy the buffer in one launch, or a few large ones")
        else:
            cause = "the small copies did not run from the cache (do not flush it between copies)"
        return Verdict(check, False,
                       f"copy_bandwidth's sweep shows {fmt_ratio(ratio)} the reference's cache cliff "
                       f"(GB/s of a buffer well inside the L2 over one well past it): {cause}. "
                       f"{CACHE_LESSON}", ratio)
    return Verdict(check, True,
                   f"copy_bandwidth's sweep shows the cache cliff ({fmt_ratio(ratio)} the reference's).", ratio)


def flops_counted_2n3(s: _Session, function: str) -> Verdict:
    """matmul_tflops must count 2·n³ FLOPs per matmul and report TFLOP/s."""
    check = check_id("flops_counted_2n3", function)
    raw, x, _trace = s.measure(function, "ideal")
    if x is None:
        return _not_a_number(check, function, raw, "TFLOP/s")
    ratio = x / s.reference("matmul_tflops", "ideal", MATMUL_N, iters=ITERS)
    head = f"{function} reads {fmt_ratio(ratio)} the reference TFLOP/s on the same simulated GPU"
    explained = _explain(ratio, FLOP_FACTORS, TFLOPS_UNITS)
    if explained == (1.0, 1.0):
        return Verdict(check, True, f"{function} counts 2·n**3 FLOPs and reports TFLOP/s.", ratio)
    if explained is None:
        above = x > SPEED_OF_LIGHT * s.cfgs["ideal"]["peak_tflops"]
        why = (", faster than this device can compute: the clock was read before the GPU "
               "finished, or the FLOPs are miscounted" if above else ", which no FLOP count or unit explains")
        return Verdict(check, False,
                       f"{head}{why}: time only the n×n matmuls, in the dtype asked for, and count "
                       "2·n**3 FLOPs each. Reread: Build It, matmul_tflops.", ratio)
    count, unit = explained
    why = "; ".join(x for x in (FLOP_FACTORS[count], TFLOPS_UNITS[unit]) if x)
    return Verdict(check, False,
                   f"{head}: {why}. Reread: The Idea, Arithmetic intensity (a multiply-add counts "
                   "as 2), and Build It, matmul_tflops.", ratio)


def within_peak(s: _Session, function: str) -> Verdict:
    """measured_peak_tflops: a compute-bound n, and never above the device's peak."""
    check = check_id("within_peak", function)
    cfg = s.cfgs["ideal"]
    raw, x, trace = s.measure(function, "ideal")
    if x is None:
        return _not_a_number(check, function, raw, "TFLOP/s")
    peak_ratio = x / cfg["peak_tflops"]
    ratio = x / s.reference("matmul_tflops", "ideal", MATMUL_N, iters=ITERS)
    explained = _single(_explain(ratio, FLOP_FACTORS, TFLOPS_UNITS))
    if explained not in (None, (1.0, 1.0)):
        return Verdict(check, True, f"{function}'s gap is a FLOP count or unit (see flops_counted_2n3).", ratio)
    if peak_ratio > SPEED_OF_LIGHT:
        return Verdict(check, False,
                       f"{function} returned {fmt_ratio(peak_ratio)} the device's bf16 peak, faster than "
                       "this device can compute: the clock was read before the GPU finished, or the "
                       "FLOPs are miscounted. Reread: Break It, Forget to synchronize, and The "
                       "roofline.", peak_ratio)
    matmuls = [g for g in trace.get("op_groups", []) if g["kind"] == "matmul"]
    if ratio < PEAK_MIN or not matmuls:
        return Verdict(check, False,
                       f"{function} reads {fmt_ratio(ratio)} the TFLOP/s of a compute-bound bf16 matmul: "
                       "pick n large enough that the matmul is past the ridge point (thousands), in "
                       "bf16. Reread: The roofline, the ridge point.", ratio)
    return Verdict(check, True, f"{function} is compute-bound and within the device's peak.", ratio)


CHECKS: dict[str, Callable[[_Session, str], Verdict]] = {
    "sync_present": sync_present,
    "bytes_counted_twice": bytes_counted_twice,
    "buffer_exceeds_cache": buffer_exceeds_cache,
    "warmup_present": warmup_present,
    "flops_counted_2n3": flops_counted_2n3,
    "units_gb_per_s": units_gb_per_s,
    "within_peak": within_peak,
}


def _charged_once(s: _Session, check: str, function: str, verdict: Verdict) -> Verdict:
    """``verdict``, or a pass pointing at the base function's check when that failed too."""
    base = BASE.get(function)
    if verdict.passed or base is None or base not in JUDGES[check]:
        return verdict
    base_id = check_id(check, base)
    try:
        other = s.verdict(base_id)
    except Exception:  # noqa: BLE001 - the base raised: this function's own failure stands
        return verdict
    if other.passed:
        return verdict
    return Verdict(verdict.check, True,
                   f"{function} shows the same mistake as {base}, charged once there ([{base_id}]).",
                   verdict.ratio)


def _instance(check: str, function: str):
    def verdict(run: Runner, profile: str, seed: int | None) -> Verdict:
        s = _Session(run, profile, seed)
        s.prefetch(MODULE[function])
        vid = check_id(check, function)
        slip = diagnose(s, function)
        if slip is not None and _agrees(s, function, slip):
            if slip.owner == vid:
                return Verdict(vid, False, slip.message)
            return Verdict(vid, True, f"not judged here: {function}'s timing is charged once, in "
                                      f"[{slip.owner}].")
        stale = _follows_device(s, vid, function)
        if stale is not None:          # nothing measured: no check can pass, none is charged elsewhere
            return stale
        return _charged_once(s, check, function, CHECKS[check](s, function))

    verdict.__name__ = check_id(check, function)
    verdict.__doc__ = f"{check} judged on {function}: {CHECKS[check].__doc__}"
    return verdict


#: Every check instance by id: ``VERDICTS[id](runner, profile, seed) -> Verdict``.
VERDICTS: dict[str, Callable[[Runner, str, int | None], Verdict]] = {
    vid: _instance(c, f) for vid, (c, f) in ids().items()}

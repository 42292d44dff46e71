"""The slips a timed region shows (``diagnose``), each charged once on the check that names it.

What ran between the function's first and last clock reading (``trace["timed"]``, from
shared/simgpu/window.py) shows: host-link copies, copies over fewer bytes of one buffer than the
n_bytes asked (not launch-bound: a launch-bound copy measures nothing and the grader's probe
fails every check for it), fills in the timed region, matmuls smaller than the n asked, and
launch-bound matmuls in measured_peak_tflops. A function that calls another with the same slip
is charged there (the same matmuls, or the same short copies), so long as its number is still
the rate of the work it timed.

A number off the reference by a count (bytes once, n**3), a unit, or a whole number of work
items (a batch of k matmuls counted as one: counts.py) is one mistake, charged on its check.
Off by any other factor (a measurement divided by an "efficiency", a clock patched to run slow,
a spec-sheet figure) it is no measurement and fails every check of its function
(``not_measured``), unless the clock started before the warm-up, which is charged there alone:
that times more than the work, so it makes a number low, never high.
"""
from __future__ import annotations

import math

from shared.lessons.why17.gpu import counts
from shared.lessons.why17.gpu import rubric as r
from shared.lessons.why17.gpu.checks import warmup_present
from shared.simgpu.judging import Diagnosis, Session
from shared.simgpu.ratios import RATIO_TOLERANCE, close, explain

#: The checks that charge a number's count of bytes or FLOPs, or its unit.
COUNT_CHECKS = ("bytes_counted_twice", "units_gb_per_s", "flops_counted_2n3")


def _owner(s: Session, function: str, *checks: str) -> str:
    """The id of the first of ``checks`` that judges ``function`` (else of the first check that does)."""
    judging = [c for c in checks if function in r.JUDGES[c]] or [c for c in r.JUDGES if function in r.JUDGES[c]]
    return s.rubric.check_id(judging[0], function)


def diagnose(s: Session, function: str) -> Diagnosis | None:
    """The slip ``function``'s timed region shows on the seeded device, or None."""
    try:
        _raw, _x, trace = s.measure(function, "ideal")
    except Exception:  # the call's own failure is every check's verdict
        return None
    timed = trace.get("timed") or {}
    found = _slip(s, function, timed)
    if found is not None and found.kind in ("short_copies", "small_matmuls"):
        found = _arguments(s, function, found) or found
    base = r.BASE.get(function)
    other = s.diagnosis(base) if base is not None else None
    if other is not None and other.kind == "arguments":     # the same count or the same short work
        found = _inherited(s, function, timed, other) or found
    if other is not None and (found is None or (found.kind, other.kind) == ("cache_sized", "short_copies")):
        found = _shared(s, function, timed, base, other) or found
    if found is not None and other is not None and other.kind == found.kind:
        return Diagnosis(found.kind, other.owner, r.say("same_slip", function=function, base=base, owner=other.owner),
                         found.rate, found.scale, found.work, base)
    found = found if found is not None else not_measured(s, function)
    if found is not None and found.kind in ("arguments", "not_measured"):
        return found
    try:
        return _unlike(s, function, timed, found is None) or found
    except Exception:  # a call's own failure is every check's verdict
        return found


def _unlike(s: Session, function: str, timed: dict, plain: bool) -> Diagnosis | None:
    """A diagnosis that fails every check of ``function`` when one of its calls measured nothing,
    however honest the usual one (every call counts the same): its number at the second iters
    asked is another rate than at the usual iters (``_iters_moved``), which no count from the
    arguments explains; or, for a caller with no slip of its own (``plain``), ``_off_its_spans``.
    None when it timed no work (the probe says so: row 3)."""
    if counts.timed_rate(function, timed) <= 0:
        return None
    blind = _timed_nothing(s, function)
    if blind is not None:
        return Diagnosis("not_measured", _owner(s, function), "", s.measure(function, "ideal")[1],
                         why=r.say("timed_nothing", function=function, call=blind))
    moved = _iters_moved(s, function)
    if moved is None:
        return _off_its_spans(s, function, timed) if plain else None
    if not warmup_present(s, function).passed:
        return None                 # the clock started before the warm-up: charged there alone
    why = r.say("iters_moved", function=function, ratio=moved, unit=r.unit(function),
                iters=s.rubric.call(s, function, None)[1]["iters"], second=r.second_iters(s.cfgs))
    return counts.count(s, function) or Diagnosis("not_measured", _owner(s, function), "",
                                                  s.measure(function, "ideal")[1], why=why)


def _timed_nothing(s: Session, function: str) -> str | None:
    """The first call the checks make of ``function`` on the seeded device (any size or iters
    asked) that returned a number having timed no work, as it was made ("copy_bandwidth(..., iters=23)"),
    else None. A call that failed is the checks' to report."""
    for variant in s.rubric.variants(s, function, "ideal"):
        try:
            _raw, x, trace = s.measure(function, "ideal", variant)
        except Exception:  # reported by the checks that ask for the call
            continue
        if x is not None and counts.timed_rate(function, trace.get("timed") or {}) <= 0:
            args, kwargs = s.rubric.call(s, function, variant)
            return f"{function}({', '.join([*map(str, args), *(f'{k}={v}' for k, v in kwargs.items())])})"
    return None


def _iters_moved(s: Session, function: str) -> float | None:
    """Its number at the second iters asked over its number at the usual iters, when they are
    not the same rate (a rate does not depend on how many items were timed), else None."""
    second = ("iters", r.second_iters(s.cfgs))
    if second not in s.rubric.variants(s, function, "ideal"):
        return None
    x, again = s.measure(function, "ideal")[1], s.measure(function, "ideal", second)[1]
    return again / x if x is not None and again is not None and not close(again, x) else None


def _off_its_spans(s: Session, function: str, timed: dict) -> Diagnosis | None:
    """A caller (at sizes and iters of its own) whose number is not made of the spans between its
    clock readings that timed work: a total (their work over their time), a mean, a median or a
    best of their rates lies between the lower of the total and the median span and the fastest
    span from main memory (shared/simgpu/window.py), or of any span for a number above what main
    memory can give (a cache's rate, which buffer_exceeds_cache charges); unless it is its base's
    number inherited (off its work as the base's is off the base's: a count or a unit of the
    base's is charged there) or a count from the arguments. A count or a unit of the caller's own
    is allowed only where a check of the caller charges it (COUNT_CHECKS); and one span slowed on
    purpose (a sleep in it) widens the spans' range, not that one."""
    base, x, rate = r.BASE.get(function), s.measure(function, "ideal")[1], counts.clean_rate(function, timed)
    spans = counts.span_rates(function, timed)
    if base is None or x is None or rate <= 0 or not spans:
        return None
    _slow, median, fast = spans
    if r.MODULE[function] == "bw" and x > s.cfgs["ideal"]["bw_gbs"] * r.SPEED_OF_LIGHT:
        fast = max(fast, (timed.get("copy_span_fastest") or 0) * 2 / 1e9)   # a cache's rate: buffer_exceeds_cache's
    low, factors = min(rate, median), {1.0}
    if any(function in r.JUDGES[c] for c in COUNT_CHECKS):      # its own count or unit is charged there
        own, units = r.factors(function)
        factors |= {c * u for c in own for u in units} | {*counts.WHOLE_ITEMS, *(1 / k for k in counts.WHOLE_ITEMS)}
    if any(low / RATIO_TOLERANCE <= x / f <= fast * RATIO_TOLERANCE for f in factors):
        return None
    _raw, base_x, base_trace = s.measure(base, "ideal")
    base_rate = counts.clean_rate(base, base_trace.get("timed") or {})
    if (base_x is not None and base_rate > 0 and close(x / rate, base_x / base_rate)) or counts.count(s, function):
        return None                 # the base's number, inherited: judged there; or a count from the arguments
    if x < low and not all(warmup_present(s, f).passed for f in (function, base)):
        return None                 # the clock started before the warm-up, which makes it low: charged there
    return Diagnosis("not_measured", _owner(s, function), "", rate)


def _inherited(s: Session, function: str, timed: dict, other: Diagnosis) -> Diagnosis | None:
    """Its base's count or short work from the arguments (``other``), when its number implies a
    whole count of its own items, or is off its work as the base's number is off the base's."""
    rate, mine = counts.timed_rate(function, timed), counts.implied(s, function)
    if mine:
        return Diagnosis(other.kind, other.owner, "", rate, mine[1] / mine[0], other.work)
    over, base_over = _over(s, function, rate), _over(s, r.BASE[function], other.rate)
    if over is not None and base_over is not None and close(over, base_over):
        return Diagnosis(other.kind, other.owner, "", rate, other.scale, other.work)
    return None


def _shared(s: Session, function: str, timed: dict, base: str, other: Diagnosis) -> Diagnosis | None:
    """``base``'s slip (``other``) in ``function``'s timed region: the same matmuls, reported for
    an n whose cube over the cap's is whole; or the same short copies (the same bytes, or reported
    ``other.scale`` times their rate as the base's are), which may then sit in the cache, while
    the number is their rate reported for a size the caller may have asked (at least
    CACHE_MULTIPLE x the L2, two buffers of it fitting in memory) or, as the base's is, their own."""
    if other.kind == "small_matmuls" and timed.get("matmuls"):
        if timed["matmul_max_flops"] <= other.work * RATIO_TOLERANCE:
            rate = timed["matmul_flops"] / (timed["duration_s"] or 1.0) / 1e12
            over = _over(s, function, rate)
            side = round(over ** (1 / 3)) if over is not None else 0
            scale = side**3 if side >= 1 and close(over, side**3) else 1.0
            return Diagnosis(other.kind, other.owner, "", rate, scale, other.work)
    if other.kind != "short_copies" or not _copies_timed(timed):
        return None
    rate, extent = counts.timed_rate(function, timed), timed.get("copy_extent_bytes", 0)
    over = _over(s, function, rate)
    if not ((extent > 0 and other.work > 0 and close(extent, other.work))
            or (other.scale > RATIO_TOLERANCE and over is not None and close(over, other.scale))):
        return None
    cfg, n = s.cfgs["ideal"], (over or 0) * extent
    if r.CACHE_MULTIPLE * cfg["l2_bytes"] / RATIO_TOLERANCE <= n <= cfg["memory_bytes"] / 2:
        return Diagnosis(other.kind, other.owner, "", rate, n / extent, extent)
    base_over = _over(s, base, other.rate)
    if base_over is not None and explain(base_over, *r.factors(base)) is not None:
        return Diagnosis(other.kind, other.owner, "", rate, 1.0, extent)
    return None


def _slip(s: Session, function: str, timed: dict) -> Diagnosis | None:
    seconds = timed.get("duration_s") or 0.0
    if seconds <= 0:
        return None
    rate = counts.timed_rate(function, timed)
    if r.MODULE[function] == "bw":
        return _copy_slip(s, function, timed, rate)
    flops = timed.get("matmul_flops", 0.0)
    n = r.asked(s.cfgs)[2]
    asked_flops = 2.0 * n**3
    if (function == "matmul_tflops" and timed.get("matmuls")
            and timed["matmul_max_flops"] * RATIO_TOLERANCE < asked_flops
            and flops * RATIO_TOLERANCE < r.ITERS * asked_flops
            and timed.get("matmul_latency_share", 0) < r.LAUNCH_BOUND_SHARE):
        # an n x n product computed in blocks (row blocks, 2 n**3 FLOPs in all) is the work asked
        side = round(timed["matmul_max_flops"] / 2) ** (1 / 3)
        return Diagnosis("small_matmuls", _owner(s, function, "flops_counted_2n3"),
                         r.say("small_matmuls", function=function, gflop=timed["matmul_max_flops"] / 1e9,
                               side=side, n=n),
                         rate, asked_flops / timed["matmul_max_flops"], timed["matmul_max_flops"])
    if timed.get("matmuls") and timed.get("fill_bytes", 0) > 0:
        found = Diagnosis("extra_work", _owner(s, function, "flops_counted_2n3"),
                          r.say("matmul_fills", function=function, gib=timed["fill_bytes"] / 2**30), rate)
        # As for copies: a number that is the matmuls' rate over the spans between clock readings
        # that hold no fill (the inputs made after a log line's clock reading) is judged as any other.
        span = timed.get("clean_matmul_s")
        clean = Diagnosis("clean", "", "", timed["clean_matmul_flops"] / span / 1e12) if span else None
        if _explained(s, function, found) and not (clean and _explained(s, function, clean)):
            return found
    if (function == "measured_peak_tflops" and timed.get("matmuls")
            and timed.get("matmul_latency_share", 0) >= r.LAUNCH_BOUND_SHARE):
        return Diagnosis("launch_bound", _owner(s, function, "within_peak"),
                         r.say("launch_bound", function=function, share=timed["matmul_latency_share"]), rate)
    return None


def _copy_slip(s: Session, function: str, timed: dict, rate: float) -> Diagnosis | None:
    if timed.get("transfers") and not timed.get("copies"):
        return Diagnosis("host_link", _owner(s, function, "buffer_exceeds_cache", "bytes_counted_twice"),
                         r.say("host_link", function=function), timed["transfer_bytes"] / timed["duration_s"] / 1e9)
    if function == "measured_bandwidth" and _copies_timed(timed):
        times = timed.get("copy_extent_bytes", 0) / s.cfgs["ideal"]["l2_bytes"]
        if times < r.CACHE_MULTIPLE:
            return Diagnosis("cache_sized", _owner(s, function, "buffer_exceeds_cache"),
                             r.say("cache_sized", function=function, times=times, multiple=r.CACHE_MULTIPLE), rate)
    wanted = None if function == "measured_bandwidth" else r.asked(s.cfgs)[1]
    extent = timed.get("copy_extent_bytes", 0)
    if wanted and _copies_timed(timed) and extent * RATIO_TOLERANCE < wanted:
        return Diagnosis("short_copies", _owner(s, function, "buffer_exceeds_cache", "bytes_counted_twice"),
                         r.say("short_copies", function=function, done=extent / r.MIB, wanted=wanted / r.MIB),
                         rate, wanted / extent, extent)
    if timed.get("copies") and timed.get("fill_bytes", 0) >= r.FILL_SHARE * timed["copy_bytes"]:
        found = Diagnosis("extra_work", _owner(s, function, "bytes_counted_twice"),
                          r.say("copy_fills", function=function, gib=timed["fill_bytes"] / 2**30), rate)
        # Fills between the first and the last clock reading slowed the number only when it is
        # the copies' rate over that whole span; a number that is the copies' rate over the spans
        # between clock readings that hold no fill (a refill outside each rep's window, a clock
        # read on entry) is judged as any other.
        if _explained(s, function, found) or not timed.get("clean_s"):
            return found
        clean = Diagnosis("clean", "", "", 2 * timed["clean_copy_bytes"] / timed["clean_s"] / 1e9)
        return None if _explained(s, function, clean) else found
    return None


def _arguments(s: Session, function: str, found: Diagnosis) -> Diagnosis | None:
    """The slip as the hidden grader's CPU check of the arguments owns it (``r.ARGS_OWNER``): work
    short of what the arguments ask by the same factor at both sizes asked on the seeded device
    (a fixed share of the buffer or of the matrices, which the CPU check's own size shows too),
    its own rate reported. A shortfall that differs between the sizes (a cap) stays this
    table's; so does a number that reports the work asked over the work done."""
    usual = s.rubric.call(s, function, None)[0][0]
    others = [v for v in s.rubric.variants(s, function, "ideal")
              if v is not None and v != usual and not isinstance(v, tuple)]
    if not others or not close(_over(s, function, found.rate) or math.nan, 1.0):
        return None
    size = others[0]
    _raw, x, trace = s.measure(function, "ideal", size)
    timed = trace.get("timed") or {}
    rate = counts.timed_rate(function, timed)
    if x is None or rate <= 0 or not close(x / rate, 1.0):
        return None
    if r.MODULE[function] == "bw":
        done, wanted = timed.get("copy_extent_bytes", 0), size
    else:
        done, wanted = timed.get("matmul_max_flops", 0.0), 2.0 * size**3
    if done <= 0 or not close(wanted / done, found.scale):
        return None
    return Diagnosis("arguments", r.ARGS_OWNER[r.MODULE[function]],
                     r.say("args_share", function=function, share=1 / found.scale), found.rate, 1.0, found.work)


def _copies_timed(timed: dict) -> bool:
    """Whether the timed region copied device to device, for a while, not launch-bound."""
    return (bool(timed.get("copies")) and (timed.get("duration_s") or 0) > 0
            and timed.get("latency_share", 0) < r.LAUNCH_BOUND_SHARE)


def _over(s: Session, function: str, rate: float) -> float | None:
    """``function``'s number on the seeded device over ``rate`` (its timed work's), or None."""
    x = s.measure(function, "ideal")[1]
    return x / rate if x is not None and rate > 0 else None


def agrees(s: Session, function: str, diagnosis: Diagnosis) -> bool:
    """Whether ``function``'s number is the rate its timed work ran at, up to a byte or FLOP
    count and a unit: a diagnosed number must still be a measurement. A slip shared with the
    base function must come with the base's own count and unit (the same slip, the same number:
    no correction factor of the caller's passes as a count). A number that is no measurement
    (``not_measured``) never agrees."""
    if diagnosis.kind == "not_measured":
        return False
    mine = _explained(s, function, diagnosis)
    if not mine or not diagnosis.base:
        return bool(mine)
    return bool(mine & _explained(s, diagnosis.base, s.diagnosis(diagnosis.base)))


def _explained(s: Session, function: str, diagnosis: Diagnosis | None) -> set[tuple[float, float]]:
    """The (count, unit) factors that make ``function``'s number the rate of its timed work."""
    over = _over(s, function, diagnosis.rate) if diagnosis is not None else None
    if over is None:
        return set()
    found = (explain(over / scale, *r.factors(function)) for scale in {1.0, diagnosis.scale})
    return {e for e in found if e is not None}


def not_measured(s: Session, function: str) -> Diagnosis | None:
    """A diagnosis that fails every check of ``function`` when its number is no measurement: off
    the reference by a factor no count, unit or whole number of work items explains."""
    base = r.BASE.get(function)
    if base is not None:
        other = s.diagnosis(base)
        if other is None or other.kind != "not_measured":
            return None             # the caller's own sizes or dtype: its checks judge them
    try:
        _raw, ratio, ref = r.versus(s, function, own=True)
    except Exception:  # the call's (or the reference's) own failure is the checks' to report
        return None
    whole = {**{float(k): "" for k in counts.WHOLE_ITEMS}, **{1.0 / k: "" for k in counts.WHOLE_ITEMS}}
    if ratio is None or explain(ratio, *r.factors(function)) is not None:
        return None
    if explain(ratio, whole, {1.0: ""}) or not r.BAND[0] <= ratio <= r.BAND[1]:
        # k items counted as one, or a unit's matter; unless a count taken from the arguments
        return counts.count(s, function) if base is None else None
    if base is not None:
        base_ratio = r.versus(s, base, own=True)[1]
        if base_ratio is None or not close(ratio, base_ratio):
            return None
    if ratio < 1 and any(f is not None and not warmup_present(s, f).passed for f in (function, base)):
        return None                 # the clock started before the warm-up: charged there alone
    return counts.count(s, function) or Diagnosis("not_measured", _owner(s, function), "", ref)

"""The slips a timed region (window.py's ``trace["timed"]``) shows, each charged once, on the check
table.yml's ``owners`` names (a caller's on its base's), and numbers that are no measurement
(``not_measured``): rows 1 and 2 of docs/simulated-gpu.md's table.
"""
from __future__ import annotations

import math
from dataclasses import replace

from shared.lessons.why17.gpu import counts
from shared.lessons.why17.gpu import rubric as r
from shared.lessons.why17.gpu.checks import warmup_present
from shared.simgpu.judging import Diagnosis, Session
from shared.simgpu.ratios import RATIO_TOLERANCE, close, explain

#: The (count, unit) factors of an honest number.
HONEST = (1.0, 1.0)
#: The checks that charge a number's count of bytes or FLOPs, or its unit.
COUNT_CHECKS = ("bytes_counted_twice", "units_gb_per_s", "flops_counted_2n3")


def _owner(s: Session, function: str, key: str) -> str:
    """The id of the first check ``owners[key]`` names that judges ``function``, else of the first that does."""
    judging = [c for c in r.OWNERS.get(key, ()) if function in r.JUDGES[c]]
    return s.rubric.check_id((judging or [c for c in r.JUDGES if function in r.JUDGES[c]])[0], function)


def _slipped(s: Session, function: str, key: str, rate: float, scale: float = 1.0, work: float = 0.0,
             **fields) -> Diagnosis:
    """Slip ``key`` of ``function``: its message (messages.yml) charged on its owner."""
    return Diagnosis(key, _owner(s, function, key), r.say(key, function=function, **fields), rate, scale, work)


def _forged(s: Session, function: str, rate: float, why: str = "") -> Diagnosis:
    """A number that is no measurement: every check of ``function`` fails (with ``why``, if given)."""
    return Diagnosis("not_measured", _owner(s, function, ""), "", rate, why=why)


def _cold(s: Session, *functions: str | None) -> bool:
    """Whether one of ``functions`` started its clock before the warm-up (charged there alone)."""
    return any(f is not None and not warmup_present(s, f).passed for f in functions)


def diagnose(s: Session, function: str) -> Diagnosis | None:
    """The slip ``function``'s timed region shows on the seeded device, or None. ``idled`` (and
    ``why``) where a count or share (a slip other than the host's idle) makes the number its
    window's rate only with the host's idle in it: two mistakes making one number, a rate of the
    program's choosing (a share of the work asked over a window padded by a sleep), which
    ``agrees`` takes for no measurement."""
    found = _diagnose(s, function)
    if found is not None and (found.kind == "not_measured" or found.idled):
        return found
    base = r.BASE.get(function)
    other = s.diagnosis(base) if base is not None else None
    # a caller of such a base whose own window needs the same share and its own idle (its own n)
    share = found or (other if other is not None and other.idled and other.kind != "host_idle" else None)
    if share is None:
        return found
    try:
        timed = s.window(function)
    except Exception:  # the call's own failure is every check's verdict
        return found
    rates = counts.with_idle(timed, found.rate if found is not None else counts.timed_rate(function, timed))
    if len(rates) == 2 and HONEST in counts.explained(s, function, rates[0], share.scale) and \
            HONEST not in counts.explained(s, function, rates[1], share.scale):
        idle = timed["idle_s"]
        why = r.say("idle_and_share", function=function, kind=share.kind, ms=idle * 1e3,
                    share=idle / timed["duration_s"])
        return replace(found or share, idled=True, why=why, base=found.base if found else base)
    return found


def _diagnose(s: Session, function: str) -> Diagnosis | None:
    """``diagnose`` but for the idle a count or share needs."""
    try:
        timed = s.window(function)
    except Exception:  # the call's own failure is every check's verdict
        return None
    base = r.BASE.get(function)
    other = s.diagnosis(base) if base is not None else None
    if other is not None and other.kind == "not_measured":      # relying on a number that is no measurement
        return _forged(s, function, 0.0, r.say("base_not_measured", function=function, base=base))
    found = _slip(s, function, timed) or _idle_elsewhere(s, function, timed)
    if found is not None and found.kind in ("short_copies", "small_matmuls"):
        found = _arguments(s, function, found) or found
    if other is not None and other.kind == "arguments":     # the same count or the same short work
        found = _inherited(s, function, timed, other) or found
    if other is not None and (found is None or (found.kind, other.kind) == ("cache_sized", "short_copies")):
        found = _shared(s, function, timed, base, other) or found
    if found is not None and other is not None and other.kind == found.kind:     # charged on the base's owner
        return replace(found, owner=other.owner, message="", base=base)
    found = found if found is not None else not_measured(s, function)
    if found is not None and found.kind in ("arguments", "not_measured"):
        return found
    if found is not None and found.kind == "host_idle":      # a fixed idle moves the rate with the count timed
        return found if _reads_its_window(s, function) else _forged(s, function, found.rate)
    try:
        return _unlike(s, function, timed, found is None) or found
    except Exception:  # a call's own failure is every check's verdict
        return found


def _unlike(s: Session, function: str, timed: dict, plain: bool) -> Diagnosis | None:
    """Every call counts the same: a diagnosis failing every check of ``function`` when one call
    timed no work, or the second iters gives another rate (no count from the arguments), or, for a
    caller with no slip of its own (``plain``), ``_off_its_spans``; None when the usual call timed
    no work (row 3's)."""
    if counts.timed_rate(function, timed) <= 0:
        return None
    blind = _timed_nothing(s, function)
    if blind is not None:
        return _forged(s, function, s.x(function), r.say("timed_nothing", function=function, call=blind))
    second = r.second_call(s, function)
    x, again = s.x(function), s.x(function, second) if second else None
    if x is None or again is None or close(again, x):          # a rate does not depend on the count timed
        return (_off_its_spans(s, function, timed) or _sizes_off(s, function, timed)) if plain else None
    other = s.window(function, second)       # host idle at the second iters only: the same slip
    idle = _idle(s, function, other, counts.timed_rate(function, other), second)
    if idle is not None:                      # (its rate the usual call's, which that number must be)
        return replace(idle, rate=counts.timed_rate(function, timed))
    if _cold(s, function):
        return None
    why = r.say("iters_moved", function=function, ratio=again / x, unit=r.unit(function),
                iters=s.rubric.call(s, function, None)[1]["iters"], second=second[1])
    return counts.count(s, function) or _forged(s, function, x, why)


def _reads_its_window(s: Session, function: str) -> bool:
    """Every call counts the same: whether the number at the second iters is the rate of its own
    window too, with its idle or without (a factor that matched one window's idle by chance
    matches no other); True where no second iters is asked or that call failed (the checks say so)."""
    second = r.second_call(s, function)
    try:
        timed = s.window(function, second) if second else None
    except Exception:  # the call's own failure is the checks' to report
        timed = None
    return timed is None or any(HONEST in counts.explained(s, function, one, variant=second)
                                for one in counts.with_idle(timed, counts.timed_rate(function, timed)))


def _timed_nothing(s: Session, function: str) -> str | None:
    """The first call of ``function`` the checks make on the seeded device that returned a number
    having timed no work, as written ("copy_bandwidth(..., iters=23)"), else None."""
    for variant in s.rubric.variants(s, function, "ideal"):
        try:
            x, timed = s.x(function, variant), s.window(function, variant)
        except Exception:  # reported by the checks that ask for the call
            continue
        if x is not None and counts.timed_rate(function, timed) <= 0:
            args, kwargs = s.rubric.call(s, function, variant)
            return f"{function}({', '.join([*map(str, args), *(f'{k}={v}' for k, v in kwargs.items())])})"
    return None


def _off_its_spans(s: Session, function: str, timed: dict) -> Diagnosis | None:
    """A caller whose number is not made of its spans' rates (a total, mean, median or best lies
    between the lower of the total and the median span and the fastest span, or the work's own
    rate where the host idled, a cache's for a number above main memory's), unless it is its
    base's number inherited, a count from the arguments, or a count or unit its own checks charge
    (COUNT_CHECKS)."""
    base, x, rate = r.BASE.get(function), s.x(function), counts.clean_rate(function, timed)
    if base is None or x is None or rate <= 0 or not counts.span_rates(function, timed):
        return None
    (low, fast), factors = counts.span_range(s, function, timed, x), {1.0}
    if any(function in r.JUDGES[c] for c in COUNT_CHECKS):
        own, units = r.factors(function)
        factors |= {c * u for c in own for u in units} | {*counts.WHOLE_ITEMS, *(1 / k for k in counts.WHOLE_ITEMS)}
    if any(low / RATIO_TOLERANCE <= x / f <= fast * RATIO_TOLERANCE for f in factors):
        return None
    base_x, base_timed = s.x(base), s.window(base)
    base_rate, size = counts.clean_rate(base, base_timed), counts.item_size(base, base_timed)
    if base_x is not None and base_rate > 0 and size > 0 and counts.power_of(   # the base's count, or its
            (x / rate) / (base_x / base_rate), counts.item_size(function, timed) / size,   # formula in the size
            explain(base_x / base_rate, *r.factors(base)) is None) or counts.count(s, function):
        return None
    return None if x < low and _cold(s, function, base) else _forged(s, function, rate)


def _sizes_off(s: Session, function: str, timed: dict) -> Diagnosis | None:
    """``counts.size_off`` as a diagnosis failing every check of ``function`` (the seeded device
    has no first-use cost: a missing warm-up does not move its numbers)."""
    off = counts.size_off(s, function, timed)
    if off is None:
        return None
    return _forged(s, function, counts.clean_rate(function, timed),
                   r.say("size_off", function=function, ratio=off[0], unit=r.unit(function), size=off[1]))


def _inherited(s: Session, function: str, timed: dict, other: Diagnosis) -> Diagnosis | None:
    """Its base's count or short work from the arguments (``other``), when its number implies a
    whole count of its own items, or is off its work as the base's number is off the base's."""
    rate, mine = counts.timed_rate(function, timed), counts.implied(s, function)
    if mine:
        return Diagnosis(other.kind, other.owner, "", rate, mine[1] / mine[0], other.work)
    over, base_over = counts.over(s, function, rate), counts.over(s, r.BASE[function], other.rate)
    if over is not None and base_over is not None and close(over, base_over):
        return Diagnosis(other.kind, other.owner, "", rate, other.scale, other.work)
    return None


def _shared(s: Session, function: str, timed: dict, base: str, other: Diagnosis) -> Diagnosis | None:
    """``base``'s slip (``other``) in ``function``'s window: the same matmuls, reported for an n
    whose cube over the cap's is whole; or the same short copies, their rate reported for a size
    the caller may have asked (cache_multiple x the L2 to half the memory) or their own."""
    if other.kind == "small_matmuls" and timed.get("matmuls") and \
            timed["matmul_max_flops"] <= other.work * RATIO_TOLERANCE:
        rate = timed["matmul_flops"] / (timed["duration_s"] or 1.0) / 1e12
        over = counts.over(s, function, rate)
        side = round(over ** (1 / 3)) if over is not None else 0
        return Diagnosis(other.kind, other.owner, "", rate, side**3 if side >= 1 and close(over, side**3) else 1.0,
                         other.work)
    if other.kind != "short_copies" or not _copies_timed(timed):
        return None
    rate, extent = counts.timed_rate(function, timed), timed.get("copy_extent_bytes", 0)
    over = counts.over(s, function, rate)
    if not ((extent > 0 and other.work > 0 and close(extent, other.work))
            or (other.scale > RATIO_TOLERANCE and over is not None and close(over, other.scale))):
        return None
    cfg, n = s.cfgs["ideal"], (over or 0) * extent
    if r.LIMITS.cache_multiple * cfg["l2_bytes"] / RATIO_TOLERANCE <= n <= cfg["memory_bytes"] / 2:
        return Diagnosis(other.kind, other.owner, "", rate, n / extent, extent)
    base_over = counts.over(s, base, other.rate)
    if base_over is not None and explain(base_over, *r.factors(base)) is not None:
        return Diagnosis(other.kind, other.owner, "", rate, 1.0, extent)
    return None


def _slip(s: Session, function: str, timed: dict) -> Diagnosis | None:
    """The slip of ``function``'s own timed region (before its base's is considered), or None."""
    if (timed.get("duration_s") or 0.0) <= 0:
        return None
    rate = counts.timed_rate(function, timed)
    found = (_copy_slip if r.MODULE[function] == "bw" else _matmul_slip)(s, function, timed, rate)
    return found or _idle(s, function, timed, rate)


def _idle(s: Session, function: str, timed: dict, rate: float, variant=None) -> Diagnosis | None:
    """A number (of the call ``variant``) that is the rate of the work and of the seconds the host
    slept or waited in the window after the device ran out of work (``idle_s``), with no count or
    unit factor, and not the rate of the work alone: a host wait is no wait for the device, charged
    once, on sync_present, however the other checks would read it."""
    rates = counts.with_idle(timed, rate)
    if len(rates) < 2 or HONEST not in counts.explained(s, function, rate, variant=variant) or \
            HONEST in counts.explained(s, function, rates[1], variant=variant):
        return None
    idle, duration = timed["idle_s"], timed["duration_s"]
    return replace(_slipped(s, function, "host_idle", rate, ms=idle * 1e3, share=idle / duration), moves=True,
                   idled=True)


def _idle_elsewhere(s: Session, function: str, timed: dict) -> Diagnosis | None:
    """Every call counts the same: host idle in the window of another size asked (a nap after each
    launch idles where the copies are short), charged as in the usual call, with its rate."""
    for variant in r.other_sizes(s, function):
        try:
            other = s.window(function, variant)
        except Exception:  # reported by the checks that ask for the call
            continue
        idle = _idle(s, function, other, counts.timed_rate(function, other), variant)
        if idle is not None:
            return replace(idle, rate=counts.timed_rate(function, timed))
    return None


def _matmul_slip(s: Session, function: str, timed: dict, rate: float) -> Diagnosis | None:
    """``_slip`` of a matmul function."""
    n, most, launch = r.asked(s.cfgs)[2], timed.get("matmul_max_flops", 0.0), timed.get("matmul_latency_share", 0)
    if (function == "matmul_tflops" and timed.get("matmuls") and most * RATIO_TOLERANCE < 2.0 * n**3
            and timed.get("matmul_flops", 0.0) * RATIO_TOLERANCE < r.LIMITS.iters * 2.0 * n**3
            and launch < r.LIMITS.launch_bound_share):
        # an n x n product computed in blocks (row blocks, 2 n**3 FLOPs in all) is the work asked
        return _slipped(s, function, "small_matmuls", rate, 2.0 * n**3 / most, most,
                        gflop=most / 1e9, side=round(most / 2) ** (1 / 3), n=n)
    if timed.get("matmuls") and timed.get("fill_bytes", 0) > 0:
        # a number that is the matmuls' rate over the spans that hold no fill is judged as any other
        span = timed.get("clean_matmul_s")
        if counts.explained(s, function, rate) and not (span and counts.explained(s, function,
                                                                      timed["clean_matmul_flops"] / span / 1e12)):
            return _slipped(s, function, "matmul_fills", rate, gib=timed["fill_bytes"] / 2**30)
    if function == "measured_peak_tflops" and timed.get("matmuls") and launch >= r.LIMITS.launch_bound_share:
        return _slipped(s, function, "launch_bound", rate, share=launch)
    return None


def _copy_slip(s: Session, function: str, timed: dict, rate: float) -> Diagnosis | None:
    """``_slip`` of a bandwidth function."""
    extent, wanted = timed.get("copy_extent_bytes", 0), r.asked(s.cfgs)[1]
    if timed.get("transfers") and not timed.get("copies"):
        return _slipped(s, function, "host_link", timed["transfer_bytes"] / timed["duration_s"] / 1e9)
    times = extent / s.cfgs["ideal"]["l2_bytes"]
    if function == "measured_bandwidth" and _copies_timed(timed) and times < r.LIMITS.cache_multiple:
        return _slipped(s, function, "cache_sized", rate, times=times, multiple=r.LIMITS.cache_multiple)
    if function != "measured_bandwidth" and _copies_timed(timed) and extent * RATIO_TOLERANCE < wanted:
        return _slipped(s, function, "short_copies", rate, wanted / extent, extent,
                        done=extent / r.MIB, wanted=wanted / r.MIB)
    if timed.get("copies") and timed.get("fill_bytes", 0) >= r.LIMITS.fill_share * timed["copy_bytes"]:
        # fills slowed the number only when it is the copies' rate over the whole window; one that
        # is their rate over the spans that hold no fill (a refill outside each rep) is judged as any other
        if counts.explained(s, function, rate) or not timed.get("clean_s") or \
                not counts.explained(s, function, 2 * timed["clean_copy_bytes"] / timed["clean_s"] / 1e9):
            return _slipped(s, function, "copy_fills", rate, gib=timed["fill_bytes"] / 2**30)
    return None


def _arguments(s: Session, function: str, found: Diagnosis) -> Diagnosis | None:
    """The slip as the CPU argument check owns it (``r.ARGS_OWNER``): the same shortfall at both
    sizes asked, its own rate reported (a cap, or the work asked reported, stays this table's)."""
    others = r.other_sizes(s, function)
    if not others or not close(counts.over(s, function, found.rate) or math.nan, 1.0):
        return None
    x, timed = s.x(function, others[0]), s.window(function, others[0])
    rate = counts.timed_rate(function, timed)
    if x is None or rate <= 0 or not close(x / rate, 1.0):
        return None
    bw = r.MODULE[function] == "bw"
    done = timed.get("copy_extent_bytes", 0) if bw else timed.get("matmul_max_flops", 0.0)
    if done <= 0 or not close((others[0] if bw else 2.0 * others[0]**3) / done, found.scale):
        return None
    return Diagnosis("arguments", r.ARGS_OWNER[r.MODULE[function]],
                     r.say("args_share", function=function, share=1 / found.scale), found.rate, 1.0, found.work)


def _copies_timed(timed: dict) -> bool:
    """Whether the timed region copied device to device, for a while, not launch-bound."""
    return (bool(timed.get("copies")) and (timed.get("duration_s") or 0) > 0
            and timed.get("latency_share", 0) < r.LIMITS.launch_bound_share)


def agrees(s: Session, function: str, diagnosis: Diagnosis) -> bool:
    """Whether ``function``'s number is its timed work's rate up to a count and a unit (the base's,
    for a slip shared with it); a number that is no measurement never agrees, nor a count or share
    that explains it only with the host's idle (``diagnose``)."""
    if diagnosis.kind == "not_measured" or (diagnosis.idled and diagnosis.kind != "host_idle"):
        return False
    mine = counts.explained(s, function, diagnosis.rate, diagnosis.scale)
    if not mine or not diagnosis.base:
        return bool(mine)
    other = s.diagnosis(diagnosis.base)
    return bool(other is not None and mine & counts.explained(s, diagnosis.base, other.rate, other.scale))


def honest(function: str, number: float, timed: dict, seconds: float) -> bool:
    """Whether ``number`` is the work of the window ``timed`` over ``seconds`` of it (all of it, or
    the window less its idle) as counted and in the unit asked."""
    rate = counts.timed_rate(function, timed) * (timed.get("duration_s") or 0.0) / seconds if seconds > 0 else 0.0
    return rate > 0 and explain(number / rate, *r.factors(function)) == HONEST


def _reads_otherwise(s: Session, function: str, said: tuple[float, float]) -> bool:
    """Whether ``function``'s own window explains its number by counts or units, none of them
    ``said`` (its reading against the reference): a factor met by chance (a pace near the device's
    speed padding half the work skipped)."""
    own = counts.explained(s, function, counts.timed_rate(function, s.window(function)))
    return bool(own) and said not in own


def not_measured(s: Session, function: str) -> Diagnosis | None:
    """A diagnosis failing every check of ``function`` whose number is off the reference by a factor
    no count, unit or whole number of work items explains."""
    base = r.BASE.get(function)
    if base is not None:        # the caller's own sizes or dtype: its checks judge them (_diagnose
        return None             # fails a caller of a base that measures nothing)
    try:
        _raw, ratio, ref = r.versus(s, function, own=True)
    except Exception:  # the call's (or the reference's) own failure is the checks' to report
        return None
    said = explain(ratio, *r.factors(function)) if ratio is not None else None
    if ratio is None:
        return None
    if said is not None:        # the count its own window reads, or the work asked over more work timed
        return counts.count(s, function) if _reads_otherwise(s, function, said) else \
            counts.asked(s, function) if said != HONEST else None
    whole = {**{float(k): "" for k in counts.WHOLE_ITEMS}, **{1.0 / k: "" for k in counts.WHOLE_ITEMS}}
    if explain(ratio, whole, {1.0: ""}) or not r.LIMITS.band[0] <= ratio <= r.LIMITS.band[1]:
        # k items counted as one, or a unit's matter; unless a count taken from the arguments
        return counts.count(s, function)
    if ratio < 1 and _cold(s, function):
        return None
    return counts.count(s, function) or _forged(s, function, ref)

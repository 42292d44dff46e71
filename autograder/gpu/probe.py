"""The hidden grader's probe (row 3 of docs/simulated-gpu.md's table); nothing here ships to students.

``settings`` adds a ``probe`` device (the seeded one, bandwidth and peak scaled by factors drawn from
the secret) and draws the settings' order, the rounds of unjudged calls and the sizes asked;
``follows`` wants the number to move from the seeded device to the probe's as its timed work did
(the work's own rate, less the host's idle, where that idle differs between the two: a pace),
and, where its clock stopped on the asynchronous device before the work it launched finished, to
be that work's rate.
"""
from __future__ import annotations

import math
import random

from shared.simgpu import settings as simsettings
from shared.simgpu.judging import Session, Verdict
from shared.simgpu.ratios import RATIO_TOLERANCE, READ_SLACK_S, close, fmt_ratio

#: Ranges the probe's factors are drawn from (a faster device or a slower one): both on one side of
#: 1, so that a matmul compute-bound on the seeded device stays compute-bound.
SCALES = ((1.5, 2.5), (0.4, 0.7))
#: How many rounds of unjudged calls (each judged call once) precede the judged ones in each
#: setting without the first-use cost, drawn: a program honest only for its first few calls is
#: judged on one it forged. ``cold`` keeps none (its verdict is whether the first use was timed).
PRELUDE_ROUNDS = (4, 9)
#: A number follows the device when it moved as its timed work's rate did, within this factor.
FOLLOW_TOLERANCE = 1.05
#: READ_SLACK_S (ratios.py), a clock's tick: an early stop's window is microseconds long
#: (ASYNC_LAUNCH_S a launch), so a tick is a large share of it.


def settings(profile: str, seed: int | None) -> dict:
    """The student-visible settings plus ``probe`` and its ``factors``, with ``order``, ``prelude``
    (setting -> rounds of unjudged calls) and ``draw`` (the sizes' seed) drawn from ``seed``."""
    out = simsettings.base(profile, seed)
    ideal = out["ideal"]
    rng = random.Random(f"simgpu-settings\0{seed}")
    low, high = SCALES[rng.randrange(len(SCALES))]
    drawn = {"bw": round(rng.uniform(low, high), 3), "peak": round(rng.uniform(low, high), 3)}
    out["probe"] = dict(ideal, bw_gbs=round(ideal["bw_gbs"] * drawn["bw"], 1),
                        peak_tflops=round(ideal["peak_tflops"] * drawn["peak"], 1))
    out["factors"] = {"probe": {"bw": out["probe"]["bw_gbs"] / ideal["bw_gbs"],
                                "peak": out["probe"]["peak_tflops"] / ideal["peak_tflops"]}}
    order = ["ideal", "probe", "async", "cold"]
    rng.shuffle(order)
    out["order"] = order
    out["prelude"] = {name: rng.randint(*PRELUDE_ROUNDS) for name in order if not out[name]["first_use"]}
    out["draw"] = rng.getrandbits(64)       # the sizes the rubric asks for
    return out


def _work_rate(s: Session, function: str, trace: dict, less_idle: bool = False) -> float:
    """The timed work (``Rubric.work``) per second of the timed window, or with ``less_idle`` of
    the window less its host idle (``idle_s``: the work's own rate, whatever waits pad the window);
    0 when it timed none."""
    timed = trace.get("timed") or {}
    seconds = (timed.get("duration_s") or 0.0) - ((timed.get("idle_s") or 0.0) if less_idle else 0.0)
    return s.rubric.work(function, timed) / seconds if seconds > 0 else 0.0


def _own_rate(s: Session, function: str, trace: dict) -> float:
    """The timed work per second over the spans between clock readings that hold all of it
    (``Rubric.clean``), else ``_work_rate``: a reading of another clock before or after them (an
    event loop's, a log line's) and the sleep between adds time the number never held."""
    return s.rubric.clean(function, trace.get("timed") or {}) or _work_rate(s, function, trace)


def _idle_busy(trace: dict) -> tuple[float, float]:
    """(host idle, busy time: the window less its idle) of a call's timed window, in seconds."""
    timed = trace.get("timed") or {}
    idle = timed.get("idle_s") or 0.0
    return idle, (timed.get("duration_s") or 0.0) - idle


def _waited(trace: dict) -> float:
    """Seconds of waits the host asked for in a call's timed window (sleeps, timeouts)."""
    return (trace.get("timed") or {}).get("waited_s") or 0.0


def _idle_moved(idle_busy: list[tuple[float, float]]) -> bool:
    """Whether the host idle of two windows ((idle, busy) each) differs by more than
    FOLLOW_TOLERANCE's share of the longer busy time: a wait that pads the window to a time of its
    own choosing (a pace), which idles less where the device is slower; a fixed wait idles as long
    on both (sync_present's alone)."""
    (idle_a, busy_a), (idle_b, busy_b) = idle_busy
    return abs(idle_a - idle_b) > (FOLLOW_TOLERANCE - 1) * max(busy_a, busy_b)


def _idle_fixed(idle_busy: list[tuple[float, float]]) -> bool:
    """Whether two windows ((idle, busy) each) idle as long (within RATIO_TOLERANCE): a fixed wait
    (a cool-down, a nap), which the seeded device passes exactly; a wait sized from a clock or from
    the work (a pace, a share of a time measured or remembered) idles otherwise on a device of
    another speed."""
    idle_a, idle_b = idle_busy[0][0], idle_busy[1][0]
    return min(idle_a, idle_b) > 0 and close(idle_a, idle_b)


def _idle_varies(s: Session, check: str, function: str, traces: list[dict]) -> Verdict | None:
    """A failing Verdict when ``function``'s seeded window idles and the probe's idles otherwise,
    where its number needs that idle (a count or share padded by it), or where its slip is the
    host's idle, which only a fixed wait is, and the program asked the two devices for waits of
    other lengths (a pace): at the usual call (``traces``: its trace on each device) or at any
    other asked on both devices (every call counts the same). A fixed wait that overlaps work
    idles otherwise on a device of another speed, and is still the slip. None otherwise."""
    diagnosis = s.diagnosis(function)
    idled, host = getattr(diagnosis, "idled", False), getattr(diagnosis, "kind", None) == "host_idle"
    if not idled and not host:
        return None
    calls = [([_idle_busy(t) for t in traces], [_waited(t) for t in traces])]
    for variant in s.rubric.variants(s, function, "probe"):
        if variant is not None:
            try:
                other = [s.measure(function, setting, variant)[2] for setting in ("ideal", "probe")]
            except Exception:  # the call's own failure is the checks' to report
                continue
            calls.append(([_idle_busy(t) for t in other], [_waited(t) for t in other]))
    for i, (((idle_a, busy_a), (idle_b, busy_b)), waited) in enumerate(calls):
        asked_otherwise = host and max(waited) > 0 and (min(waited) <= 0 or not close(waited[0], waited[1]))
        paced = asked_otherwise or (idled and (i == 0 or not host))
        if idle_a > 0 and paced and not _idle_fixed([(idle_a, busy_a), (idle_b, busy_b)]):
            message = s.rubric.say("idle_varies", function=function, ms=idle_a * 1e3, other_ms=idle_b * 1e3,
                                   share=idle_a / (idle_a + busy_a))
            return Verdict(check, False, message, idle_b / idle_a)
    return None


def follows(s: Session, check: str, function: str, slipped: bool = False) -> Verdict | None:
    """A failing Verdict when ``function``'s number does not move from the seeded device to the
    probe's as its timed work's rate did, or that work ran as fast on both, else None; with
    ``slipped`` (a slip whose work may not depend on the device: copies in the cache) the work
    need not have moved."""
    rubric = s.rubric
    a, trace_a = s.number(function, "ideal")
    b, trace_b = s.number(function, "probe")
    scale = s.cfgs["factors"]["probe"][rubric.speed(function)]
    idle_busy = [_idle_busy(trace_a), _idle_busy(trace_b)]
    varies = _idle_varies(s, check, function, [trace_a, trace_b])
    if varies is not None:
        return varies
    # the rate over the spans that hold the work, unless the wait is a pace; and where the host
    # idled, the work's own rate (the window less its idle), which a number that took a fixed
    # wait out of its time (a cool-down it timed) follows
    pairs = [] if _idle_moved(idle_busy) else [[_own_rate(s, function, t) for t in (trace_a, trace_b)]]
    if not pairs or idle_busy[0][0] > 0 or idle_busy[1][0] > 0:
        pairs.append([_work_rate(s, function, t, less_idle=True) for t in (trace_a, trace_b)])
    timed_a, timed_b = (t.get("timed") or {} for t in (trace_a, trace_b))
    honest = [ra > 0 and rubric.honest(function, a, timed_a, rubric.work(function, timed_a) / ra)
              for ra, _rb in pairs] if len(pairs) == 2 else []
    if honest.count(True) == 1:
        # a number that is one of the two rates on the seeded device is that rate on the probe's: one
        # that took the host's idle out of its time (a timed cool-down) takes it out there too
        pairs = [pairs[honest.index(True)]]
        if honest[1] and not rubric.honest(function, b, timed_b, idle_busy[1][1]):
            return Verdict(check, False, rubric.say("not_following", function=function, moved=fmt_ratio(b / a),
                                                    scale=scale, work_moved=pairs[0][1] / pairs[0][0]),
                           (b / a) / (pairs[0][1] / pairs[0][0]))
    moved, failed = fmt_ratio(b / a), []
    for ra, rb in pairs:
        if ra <= 0 or rb <= 0 or (close(rb, ra, FOLLOW_TOLERANCE) and not slipped):
            failed.append(Verdict(check, False, rubric.say("not_following_nothing_timed", function=function,
                                                            moved=moved, scale=scale), b / a))
        elif close((b / a) / (rb / ra), 1.0, FOLLOW_TOLERANCE):
            return _off_its_window(s, check, function, a / _work_rate(s, function, trace_a), slipped)
        else:
            failed.append(Verdict(check, False, rubric.say("not_following", function=function, moved=moved,
                                                            scale=scale, work_moved=rb / ra), (b / a) / (rb / ra)))
    return failed[0]


def _off_its_window(s: Session, check: str, function: str, factor: float, slipped: bool) -> Verdict | None:
    """A failing Verdict when ``function``'s number on the asynchronous device is not the rate of
    the work it launched in its window as its number on the seeded device is of that device's
    (``factor``: that number over its window's work per second): a number not read off its own
    window. Where its clock stopped while that work still ran, a number off it either way (a floor,
    a kept rate), within FOLLOW_TOLERANCE; where the work had finished, a number above it beyond
    RATIO_TOLERANCE, over the whole window as the clock that closed it measured it and over the
    spans between clock readings that hold the work (a correction applied only where launches run
    ahead of the host); and where its clock stopped while that work ran, after a sleep that held
    half its window or more, yet the number is its seeded device's (within FOLLOW_TOLERANCE): a nap
    that ended as the work would (a pace to a time kept from another call). None for an early stop
    read off the window, by a clock of any resolution down to a microsecond (READ_SLACK_S), or a
    number below (queued work timed): sync_present's alone; and for a ``slipped`` call, whose work
    may not be the device's."""
    try:
        x, trace = s.number(function, "async")
    except Exception:  # the asynchronous call's own failure is sync_present's to report
        return None
    timed = trace.get("timed") or {}
    launched = timed.get("launched") or {}
    running, work = launched.get("running"), s.rubric.work(function, launched)
    if (timed.get("duration_s") or 0) <= 0 or (not running and (slipped or work <= 0)):
        return None
    window = timed["duration_s"] if running else timed.get("own_s", timed["duration_s"])
    said = factor * work / x if x > 0 else math.inf   # seconds the number says
    ratio = window / said if said > 0 else math.inf
    napped = (timed.get("waited_s") or 0.0) / timed["duration_s"]
    if running and napped >= 0.5 and close(x, s.number(function, "ideal")[0], FOLLOW_TOLERANCE):
        # a sleep ended the window as the work would have: a pace, not a wait for the device
        return Verdict(check, False, s.rubric.say("paced_while_running", function=function, share=napped), ratio)
    if abs(said - window) <= READ_SLACK_S or close(ratio, 1.0, FOLLOW_TOLERANCE if running else RATIO_TOLERANCE):
        return None
    if not running:
        fastest = s.rubric.fastest(function, timed)
        if ratio < 1 or (fastest > 0 and x <= factor * fastest * RATIO_TOLERANCE):
            return None
    key = "not_read_off_window" if running else "not_read_off_clock"
    return Verdict(check, False, s.rubric.say(key, function=function, ratio=ratio), ratio)

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
from shared.simgpu.ratios import RATIO_TOLERANCE, close, fmt_ratio

#: Ranges the probe's factors are drawn from (a faster device or a slower one): both on one side of
#: 1, so that a matmul compute-bound on the seeded device stays compute-bound.
SCALES = ((1.5, 2.5), (0.4, 0.7))
#: How many rounds of unjudged calls (each judged call once) precede the judged ones in each
#: setting without the first-use cost, drawn: a program honest only for its first few calls is
#: judged on one it forged. ``cold`` keeps none (its verdict is whether the first use was timed).
PRELUDE_ROUNDS = (4, 9)
#: A number follows the device when it moved as its timed work's rate did, within this factor.
FOLLOW_TOLERANCE = 1.1
#: Seconds a window read by a program's clock may differ from the device's: datetime.now() counts
#: whole microseconds (each of two readings rounds by up to half of one) and time.time()'s float
#: near 1.7e9 s resolves 0.24 us. An early stop's window is microseconds long (ASYNC_LAUNCH_S a
#: launch), so a tick is a large share of it; the work of every call asked takes far longer.
READ_SLACK_S = 1.5e-6


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


def _idle_moved(trace_a: dict, trace_b: dict) -> bool:
    """Whether the host idle of two windows differs by more than FOLLOW_TOLERANCE's share of the
    longer busy time (a window less its idle): a wait that pads the window to a time of its own
    choosing (a pace), which idles less where the device is slower; a fixed wait idles as long on
    both (sync_present's alone)."""
    a, b = trace_a.get("timed") or {}, trace_b.get("timed") or {}
    idle_a, idle_b = a.get("idle_s") or 0.0, b.get("idle_s") or 0.0
    busy = max((a.get("duration_s") or 0.0) - idle_a, (b.get("duration_s") or 0.0) - idle_b)
    return abs(idle_a - idle_b) > (FOLLOW_TOLERANCE - 1) * busy


def follows(s: Session, check: str, function: str, slipped: bool = False) -> Verdict | None:
    """A failing Verdict when ``function``'s number does not move from the seeded device to the
    probe's as its timed work's rate did, or that work ran as fast on both, else None; with
    ``slipped`` (a slip whose work may not depend on the device: copies in the cache) the work
    need not have moved."""
    rubric = s.rubric
    a, trace_a = s.number(function, "ideal")
    b, trace_b = s.number(function, "probe")
    scale = s.cfgs["factors"]["probe"][rubric.speed(function)]
    paced = _idle_moved(trace_a, trace_b)           # a pace: the work's own rate, the window less its idle
    ra, rb = (_work_rate(s, function, t, less_idle=True) if paced else _own_rate(s, function, t)
              for t in (trace_a, trace_b))
    still = ra > 0 and rb > 0 and close(rb, ra, FOLLOW_TOLERANCE)
    moved = fmt_ratio(b / a)
    if ra <= 0 or rb <= 0 or (still and not slipped):
        return Verdict(check, False, rubric.say("not_following_nothing_timed", function=function, moved=moved,
                                                 scale=scale), b / a)
    ratio = (b / a) / (rb / ra)
    if not close(ratio, 1.0, FOLLOW_TOLERANCE):
        return Verdict(check, False, rubric.say("not_following", function=function, moved=moved, scale=scale,
                                                 work_moved=rb / ra), ratio)
    return _off_its_window(s, check, function, a / _work_rate(s, function, trace_a), slipped)


def _off_its_window(s: Session, check: str, function: str, factor: float, slipped: bool) -> Verdict | None:
    """A failing Verdict when ``function``'s number on the asynchronous device is not the rate of
    the work it launched in its window as its number on the seeded device is of that device's
    (``factor``: that number over its window's work per second): a number not read off its own
    window. Where its clock stopped while that work still ran, a number off it either way (a floor,
    a kept rate), within FOLLOW_TOLERANCE; where the work had finished, a number above it beyond
    RATIO_TOLERANCE, over the whole window as the clock that closed it measured it and over the
    spans between clock readings that hold the work (a correction applied only where launches run
    ahead of the host). None for an early stop read off the window, by a clock of any resolution
    down to a microsecond (READ_SLACK_S), or a number below (queued work timed): sync_present's
    alone; and for a ``slipped`` call, whose work may not be the device's."""
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
    if abs(said - window) <= READ_SLACK_S or close(ratio, 1.0, FOLLOW_TOLERANCE if running else RATIO_TOLERANCE):
        return None
    if not running:
        fastest = s.rubric.fastest(function, timed)
        if ratio < 1 or (fastest > 0 and x <= factor * fastest * RATIO_TOLERANCE):
            return None
    key = "not_read_off_window" if running else "not_read_off_clock"
    return Verdict(check, False, s.rubric.say(key, function=function, ratio=ratio), ratio)

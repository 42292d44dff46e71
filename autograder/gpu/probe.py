"""The hidden grader's probe: devices no submission can predict, and the gate that uses them.

``settings`` adds to the student-visible settings (shared/simgpu/settings.py) a ``probe`` device,
the seeded one with bandwidth and peak scaled by factors drawn from the secret seed, and draws
from it the order of the settings' processes, the rounds of unjudged calls before the judged
ones and the sizes asked. ``follows``, the gate every GPU check asks, wants the number to move from the seeded
device to the probe's as the work between its own clock readings moved: a hard-coded, cached or
counted answer does not. Nothing here ships to students.
"""
from __future__ import annotations

import random

from shared.simgpu import settings as simsettings
from shared.simgpu.judging import Session, Verdict
from shared.simgpu.ratios import close, fmt_ratio

#: The probe's device is the seeded one with bandwidth and peak each scaled by a factor drawn
#: with the seed from one of these ranges (a faster device or a slower one): both factors on the
#: same side of 1, so that a matmul compute-bound on the seeded device stays compute-bound.
SCALES = ((1.5, 2.5), (0.4, 0.7))
#: Rounds of unjudged calls before the judged ones in each setting's process without the one-time
#: first-use cost, each round every judged call (function, sizes) once: how many is drawn within
#: this range, so that a program honest only for its first calls (fewer than the least here, per
#: process, function, size or module) is judged, on the seeded and the probe's device, on a call
#: it forged. ``cold`` keeps none: its verdict is whether the process's first use was timed, and a
#: check that reads it reads the seeded device too, where such a program's number is forged.
PRELUDE_ROUNDS = (4, 9)
#: A number follows the device when it moved as its timed work's rate did, within this factor.
FOLLOW_TOLERANCE = 1.1


def settings(profile: str, seed: int | None) -> dict:
    """The student-visible settings plus ``probe``, with its factors, in an order drawn from
    ``seed``; ``prelude`` (setting -> how many rounds of unjudged calls precede the judged ones
    in its process: ``Session.prefetch``) and ``draw`` (the number the rubric draws the sizes it
    asks for from) drawn too."""
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


def _work_rate(s: Session, function: str, trace: dict) -> float:
    """The timed region's work per second (the rubric's measure of work, ``Rubric.work``) over
    the seconds between its first and last clock reading; 0 when it timed none."""
    timed = trace.get("timed") or {}
    seconds = timed.get("duration_s") or 0.0
    return s.rubric.work(function, timed) / seconds if seconds > 0 else 0.0


def follows(s: Session, check: str, function: str, slipped: bool = False) -> Verdict | None:
    """A failing Verdict when ``function``'s number does not move from the seeded device to the
    probe's as its timed work's rate did, or its timed work ran as fast on both (it measures
    nothing that depends on the device), else None. ``slipped``: the timed region shows a slip
    (work that may not depend on the device's speed: copies inside the cache), so the number need
    only move as that work did, whether or not it moved. Messages: ``Rubric.say``."""
    rubric = s.rubric
    a, trace_a = s.number(function, "ideal")
    b, trace_b = s.number(function, "probe")
    scale = s.cfgs["factors"]["probe"][rubric.speed(function)]
    ra, rb = _work_rate(s, function, trace_a), _work_rate(s, function, trace_b)
    still = ra > 0 and rb > 0 and close(rb, ra, FOLLOW_TOLERANCE)
    moved = fmt_ratio(b / a)
    if ra <= 0 or rb <= 0 or (still and not slipped):
        return Verdict(check, False, rubric.say("not_following_nothing_timed", function=function, moved=moved,
                                                 scale=scale), b / a)
    ratio = (b / a) / (rb / ra)
    if close(ratio, 1.0, FOLLOW_TOLERANCE):
        return None
    return Verdict(check, False, rubric.say("not_following", function=function, moved=moved, scale=scale,
                                             work_moved=rb / ra), ratio)

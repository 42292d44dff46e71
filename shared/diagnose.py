"""Why a number is off: its ratio to the expected value, the classic slip that ratio matches, and
the lesson section to reread, in the lesson's words.

One source of messages: the public tests (assignments/why17/tests, which students run) and the
hidden grader (autograder/lessons/why17/checks) explain a wrong value with the same words, so a
student meets the same diagnosis before and after submitting. Nothing here knows a hidden
expected value: callers pass the value they compare with, and the messages show only the ratio.

    >>> ratio_note(1.7e-08, 17.0)
    '(ratio 1e-09: the bandwidth stayed in GB/s where bytes/s were needed (GB/s = 1e9 bytes/s))'
"""
from __future__ import annotations

import math

#: Ratios (yours / expected) that point to one slip, with the slip in the lesson's words.
SLIPS: tuple[tuple[float, str], ...] = (
    (1e-9, "the 1e9 left out: the bandwidth stayed in GB/s where bytes/s were needed (GB/s = 1e9 bytes/s)"),
    (1e9, "bytes/s came out where GB/s was asked, or the 1e9 went the wrong way"),
    (1e-3, "a factor 1000 is missing: GB/s x FLOPs/byte gives GFLOP/s, and 1 TFLOP/s = 1000 GFLOP/s"),
    (1e3, "a factor 1000 too many: 1 TFLOP/s = 1000 GFLOP/s"),
    (1e-12, "TFLOP/s must become FLOP/s (x 1e12) before dividing"),
    (1e12, "TFLOP/s must become FLOP/s (x 1e12), not the other way round"),
    (1e9 / 2**30, "GiB/s came out where GB/s was asked (1 GiB = 1024^3 bytes, 1 GB = 1e9 bytes)"),
    (2**30 / 1e9, "GiB were used where GB were needed (1 GiB = 1024^3 bytes = 1.074 GB)"),
    (1e6 / 2**20, "MiB/s came out where MB/s was asked (1 MiB = 2^20 bytes)"),
    (2**20 / 1e6, "MiB were counted as MB (1 MiB = 2^20 bytes = 1.049 MB)"),
    (0.5, "a factor 2 is missing"),
    (2.0, "a factor 2 too many"),
)

# The student README's named slips ("Which mistakes cost most"), each in its own words, starting
# with the README's name for it, so the public tests and the grader call it what the README does.
#: The batching slip: every stream re-reads the weights (step bytes = batch x params x bytes/weight + ...).
REREAD_WEIGHTS = ("weights re-read per stream: one step reads them once for the whole batch, "
                  "step bytes = params x bytes/weight + batch x context x KV bytes/token")
#: The roofline slip: the higher of the two roofs.
MAX_FOR_MIN = ("max instead of min: a kernel gets the lower of its two roofs, "
               "attainable = min(peak, bandwidth x intensity / 1000)")
#: The KV cache slip: one tensor per layer where there are two.
KV_WITHOUT_2 = ("K and V: the factor 2 left out: every layer caches a key and a value per token, "
                "2 x layers x kv_heads x head_dim x bytes per value")
#: Where the lesson teaches batching.
BATCHING = "Every way around the wall (batching)"


def close(a: float, b: float, rel: float = 1e-9) -> bool:
    """Relative closeness; NaN and inf are never close to a finite value."""
    if not (math.isfinite(a) and math.isfinite(b)):
        return False
    return abs(a - b) <= rel * max(abs(a), abs(b))


#: Most relative slack a ratio may have and still match a factor (GiB/GB and MiB/MB are 2.4% apart).
MAX_SLACK = 0.02


def named(yours: float, slips: dict | None, slack: float = 1e-6) -> str | None:
    """The first of ``slips`` (a named slip's words -> the value that slip gives here) that ``yours``
    matches to within ``slack`` (relative), or None. A test that knows what a named slip returns
    passes it, so two slips with the same ratio elsewhere (max instead of min, a missing 1000)
    are told apart by the value itself."""
    if not slips or not math.isfinite(yours):
        return None
    slack = min(max(slack, 1e-6), MAX_SLACK)
    return next((words for words, value in slips.items() if close(yours, value, slack)), None)


def slip(yours: float, expected: float, twos: str = "", slack: float = 1e-6, slips: dict | None = None) -> str | None:
    """The slip whose factor ``yours / expected`` matches to within ``slack`` (relative), or None.

    ``twos`` says where a factor 2 belongs for this quantity ('K and V are two tensors per layer');
    ``slack`` is the comparison's own tolerance when ``expected`` is a rounded number (17 tok/s);
    ``slips`` (see ``named``) are asked first.
    """
    if not expected or not math.isfinite(yours) or not math.isfinite(expected):
        return None
    found = named(yours, slips, slack)
    if found:
        return found
    ratio = yours / expected
    slack = min(max(slack, 1e-6), MAX_SLACK)
    for factor, words in SLIPS:
        if close(ratio, factor, slack):
            return f"{words}: {twos}" if twos and factor in (0.5, 2.0) else words
    return None


def ratio_note(yours: float, expected: float, twos: str = "", slack: float = 1e-6, slips: dict | None = None) -> str:
    """'(ratio 0.5: <likely slip>)', '(ratio 1.37)' when no classic slip matches, or
    '(yours is nan)' when no ratio can be taken. ``slack`` and ``slips`` as in ``slip``."""
    if not expected or not math.isfinite(yours):
        return f"(yours is {yours!r})"
    ratio = yours / expected
    words = slip(yours, expected, twos, slack, slips)
    return f"(ratio {ratio:.3g}: {words})" if words else f"(ratio {ratio:.4g})"


def explain(what: str, yours: float, expected: float, *, unit: str, section: str, twos: str = "") -> str:
    """One line: '<what> gave <yours> <unit> (ratio ...: slip). Reread: <section>.'"""
    return f"{what} gave {yours:.4g} {unit} {ratio_note(yours, expected, twos)}. Reread: {section}."


def batching(batch: int, total_ratio: float, per_stream_ratio: float) -> str | None:
    """The re-read-weights slip when total tokens/s barely moved from batch 1 to ``batch`` and
    per-stream fell about ``batch``-fold while the weights dominate the bytes, else None.

    ``total_ratio`` and ``per_stream_ratio`` are yours at ``batch`` over yours at batch 1.
    """
    if batch < 2 or not (math.isfinite(total_ratio) and math.isfinite(per_stream_ratio)):
        return None
    if total_ratio < 1.5 and per_stream_ratio < 1.5 / batch:
        return REREAD_WEIGHTS
    return None


def assert_close(yours, expected: float, *, what: str, unit: str, section: str, rel: float | None = None,
                 abs: float | None = None, twos: str = "") -> None:
    """AssertionError with ``explain``'s line unless ``yours`` is within ``abs`` (or ``rel``,
    default 1e-6) of ``expected``; the public tests' comparison of a returned number."""
    if isinstance(yours, bool) or not isinstance(yours, (int, float)):
        raise AssertionError(f"{what} returned a {type(yours).__name__}, not a number; return a plain "
                             f"float in {unit}. Reread: the Returns section of its docstring.")
    tolerance = abs if abs is not None else (rel if rel is not None else 1e-6) * math.fabs(expected)
    if not (math.isfinite(yours) and math.fabs(yours - expected) <= tolerance):
        raise AssertionError(f"{explain(what, float(yours), expected, unit=unit, section=section, twos=twos)} "
                             f"Expected {expected:.4g} {unit}.")

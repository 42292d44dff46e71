"""The why17 GPU checks' table (table.yml: which check judges which timing function, owners,
thresholds with their reasons), the sizes asked (drawn from the grader's secret), the messages
(messages.yml) and the ``Why17`` rubric that shared/simgpu/judging.py runs. Each check compares
the student's number, as a ratio, with the same code under another setting or with the reference
on the same device, so that each mistake fails only its own check (docs/simulated-gpu.md).
"""
from __future__ import annotations

import functools
import random
from fractions import Fraction
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from shared import yamlfile
from shared.lessons.why17.gpu.factors import BYTE_FACTORS, FLOP_FACTORS, GBS_UNITS, TFLOPS_UNITS
from shared.simgpu import ratios
from shared.simgpu.judging import Rubric, Session

MIB = 2**20
#: The checks' table (functions, checks, owners, thresholds with their reasons) and messages.
TABLE, MESSAGES = Path(__file__).with_name("table.yml"), Path(__file__).with_name("messages.yml")


@functools.cache
def messages() -> dict[str, str]:
    """messages.yml: outcome -> its str.format template."""
    with open(MESSAGES, encoding="utf-8") as fh:
        return yamlfile.safe_load(fh)


def _table() -> tuple[dict, SimpleNamespace]:
    """(table.yml, its thresholds without their reasons by name, pairs as tuples); ValueError
    naming the file when a function named is no timing function, an owner no check or a slip no
    message, or a threshold no number."""
    with open(TABLE, encoding="utf-8") as fh:
        t = yamlfile.safe_load(fh)
    known = {f for group in t["functions"].values() for f in group}
    named = {f for fs in t["judges"].values() for f in fs} | set(t["base"]) | set(t["base"].values())
    limits = {k: v for k, v in t["thresholds"].items() if not k.endswith("_reason")}
    owners = set(t["owners"]) - set(messages()) | {c for cs in t["owners"].values() for c in cs} - set(t["judges"])
    bad = sorted(named - known) + sorted(owners) + [k for k, v in limits.items() if not all(
        isinstance(x, (int, float)) for x in (v if isinstance(v, list) else [v]))]
    if bad or set(t["args_owner"]) != set(t["functions"]):
        raise ValueError(f"{TABLE}: not a timing function, message or number: {', '.join(bad) or 'args_owner'}")
    return t, SimpleNamespace(**{k: tuple(v) if isinstance(v, list) else v for k, v in limits.items()})


#: The thresholds by name (``LIMITS.cache_multiple``); their reasons are beside them in table.yml.
_T, LIMITS = _table()
CHECK_IDS, BW, FLOPS = tuple(_T["design_checks"]), tuple(_T["functions"]["bw"]), tuple(_T["functions"]["flops"])
MODULE = {f: module for module, functions in _T["functions"].items() for f in functions}
JUDGES = {check: tuple(functions) for check, functions in _T["judges"].items()}
BASE, ARGS_OWNER, OWNERS = dict(_T["base"]), dict(_T["args_owner"]), dict(_T["owners"])


def say(key: str, **fields) -> str:
    """The message of outcome ``key`` (messages.yml) with ``fields`` filled in; a float ``ratio``
    or ``times`` is written as a ratio ("0.52x")."""
    for name in ("ratio", "times"):
        if isinstance(fields.get(name), float):
            fields[name] = ratios.fmt_ratio(fields[name])
    return messages()[key].format(**fields)


def sizes(cfg: dict) -> tuple[int, int]:
    """(small, large) copy sizes in bytes: an eighth of the L2 and eight times it, whole MiB."""
    l2 = cfg["l2_bytes"]
    return max(MIB, l2 // 8 // MIB * MIB), -(-8 * l2 // MIB) * MIB


def _rng(what: str, cfgs: dict, *more) -> random.Random:
    """The generator of draw ``what`` (and ``more``) from the grader's secret (``cfgs["draw"]``)."""
    return random.Random("\0".join(map(str, (f"why17-{what}", cfgs.get("draw"), *more))))


def asked(cfgs: dict) -> tuple[int, int, int]:
    """(small copy bytes, large copy bytes, matmul n) the checks ask for: ``sizes`` and LIMITS.matmul_n on
    a student's machine; under the grader's secret drawn (docs/simulated-gpu.md, "What the grader
    adds"), so that no program knows them from the public L2 size or a round number."""
    if "draw" not in cfgs:
        return (*sizes(cfgs["ideal"]), LIMITS.matmul_n)
    rng, l2 = _rng("asked", cfgs), cfgs["ideal"]["l2_bytes"]
    return _copy_size(rng, l2, *LIMITS.small_copy), _copy_size(rng, l2, *LIMITS.large_copy), _matmul_n(rng)


def _copy_size(rng: random.Random, l2: int, low: float, high: float) -> int:
    """Bytes in [low, high] x ``l2`` (at least 1 MiB), no fraction of the L2 with a small denominator."""
    lo = max(MIB, int(l2 * low))
    hi = max(lo, int(l2 * high))
    size = rng.randint(lo, hi)
    for _ in range(100):
        if Fraction(size, l2).denominator > LIMITS.max_denominator:
            break
        size = rng.randint(lo, hi)
    return size


def _matmul_n(rng: random.Random) -> int:
    """A matmul side in LIMITS.drawn_n, any integer but a power of two."""
    n = 4096
    while n & (n - 1) == 0:
        n = rng.randint(*LIMITS.drawn_n)
    return n


def second(cfgs: dict) -> int:
    """The second n matmul_tflops is asked on the seeded device, LIMITS.second_n_apart from the first: one
    shortfall at both is the arguments' (the CPU check's), a different one a cap (this table's)."""
    n, rng = asked(cfgs)[2], _rng("second", cfgs)
    other = n
    while max(other, n) < LIMITS.second_n_apart * min(other, n):
        other = _matmul_n(rng)
    return other


def second_iters(cfgs: dict) -> int:
    """The second iters copy_bandwidth and matmul_tflops are asked on the seeded device (LIMITS.second_iters)."""
    return _rng("iters", cfgs).randint(*LIMITS.second_iters)


def second_call(s: Session, function: str) -> tuple | None:
    """The variant asking ``function`` at the second iters on the seeded device, or None where it
    is not asked (every call counts the same: its number is judged as the usual call's)."""
    second = ("iters", second_iters(s.cfgs))
    return second if second in s.rubric.variants(s, function, "ideal") else None


def other_sizes(s: Session, function: str) -> list:
    """The sizes ``function`` is asked on the seeded device besides its usual call's (every call
    counts the same: the cliff's small copy, matmul_tflops' second n)."""
    usual = s.rubric.call(s, function, None)[0]
    return [v for v in s.rubric.variants(s, function, "ideal")
            if v is not None and not isinstance(v, tuple) and s.rubric.call(s, function, v)[0] != usual]


def extra(cfgs: dict, function: str, i: int) -> int:
    """The size of the ``i``-th unjudged call of ``function``, drawn, never a judged one."""
    rng, judged = _rng("extra", cfgs, function, i), (*asked(cfgs), second(cfgs))
    size = judged[0]
    while size in judged:
        size = _copy_size(rng, cfgs["ideal"]["l2_bytes"], *LIMITS.extra_copy) if function == "copy_bandwidth" \
            else _matmul_n(rng)
    return size


def unit(function: str) -> str:
    """The unit ``function`` returns."""
    return "GB/s" if MODULE[function] == "bw" else "TFLOP/s"


def factors(function: str) -> tuple[dict, dict]:
    """(count factors, unit factors) that may explain ``function``'s ratio to the reference."""
    return (BYTE_FACTORS, GBS_UNITS) if MODULE[function] == "bw" else (FLOP_FACTORS, TFLOPS_UNITS)


def ref_copy(s: Session, size: int | None = None) -> float:
    """The reference's GB/s for ``size`` bytes (default: the large size asked) on the ideal device."""
    return s.reference("copy_bandwidth", "ideal", size or asked(s.cfgs)[1], iters=LIMITS.iters)


def versus(s: Session, function: str, own: bool = False) -> tuple[Any, float | None, float]:
    """(raw value, ``function``'s number on the ideal device over the reference's or None when it
    is no number, the reference's): copy_bandwidth's at the large size asked (bw), matmul_tflops'
    at the n asked (flops), or with ``own`` the reference's measured_bandwidth or measured_peak_tflops."""
    raw, x, _trace = s.measure(function, "ideal")
    if x is None:
        return raw, None, 0.0
    if own and function in ("measured_bandwidth", "measured_peak_tflops"):
        ref = s.reference(function, "ideal")
    elif MODULE[function] == "bw":
        ref = ref_copy(s)
    else:
        ref = s.reference("matmul_tflops", "ideal", asked(s.cfgs)[2], iters=LIMITS.iters)
    return raw, (x / ref if ref > 0 else None), ref


def held_rate(function: str, timed: dict) -> float:
    """Bytes copied (each counted once) or FLOPs per second over the spans between clock readings
    that hold copies or matmuls and no fill (window.py), when they hold all of the window's; else 0
    (another clock's reading before or after them stretched the window, or a fill shares a span)."""
    bw = MODULE[function] == "bw"
    done, seconds = (timed.get("clean_copy_bytes", 0), timed.get("clean_s")) if bw else \
        (timed.get("clean_matmul_flops", 0.0), timed.get("clean_matmul_s"))
    held = seconds and done > 0 and done >= timed.get("copy_bytes" if bw else "matmul_flops", 0) * (1 - 1e-9)
    return done / seconds if held else 0.0


class Why17(Rubric):
    """The lesson's GPU checks, for shared/simgpu/judging.py."""

    judges = JUDGES
    module = MODULE
    base = BASE

    def __init__(self, checks: dict, diagnose, agrees, honest):
        self.checks, self.diagnose, self.agrees, self.honest = checks, diagnose, agrees, honest

    def call(self, s: Session, function: str, variant: Any) -> tuple[tuple, dict]:
        _small, large, n = asked(s.cfgs)
        if isinstance(variant, tuple) and variant[0] == "extra":     # a call before the judged ones
            return (extra(s.cfgs, function, variant[1]),), {"iters": LIMITS.iters}
        iters = variant[1] if isinstance(variant, tuple) else LIMITS.iters  # ("iters", k): the usual size
        size = None if isinstance(variant, tuple) else variant
        args = {"copy_bandwidth": (size or large,), "bandwidth_sweep": ((large // MIB,),),
                "matmul_tflops": (size or n,)}
        return (args[function], {"iters": iters}) if function in args else ((), {})

    def variants(self, s: Session, function: str, setting: str) -> tuple:
        # the cache cliff compares a small copy with a large one; a size slip is judged at two
        # sizes; every function that takes iters is asked at a second one (every call counts);
        # the probe's device is asked the same, so that a wait is seen as fixed at each
        if setting not in ("ideal", "probe") or function not in ("copy_bandwidth", "matmul_tflops", "bandwidth_sweep"):
            return (None,)
        small, large, n = asked(s.cfgs)
        iters = ("iters", second_iters(s.cfgs))
        if function == "bandwidth_sweep":
            return (None, iters)
        return (small, large, iters) if function == "copy_bandwidth" else (n, second(s.cfgs), iters)

    def prelude(self, s: Session, module: str, i: int) -> list:
        return [("copy_bandwidth" if module == "bw" else "matmul_tflops", ("extra", i))]   # at a drawn size

    def pick(self, function: str, value: Any, args: tuple) -> Any:
        """bandwidth_sweep's entry at the size asked (an int key, or the only one), else the value."""
        if function != "bandwidth_sweep" or not isinstance(value, dict):
            return value
        if args[0][0] in value:
            return value[args[0][0]]
        if len(value) == 1:
            return next(iter(value.values()))
        return value

    def work(self, function: str, timed: dict) -> float:
        """Bytes the timed copies and transfers wrote (bw), or matmul FLOPs: the probe's measure."""
        bw = MODULE[function] == "bw"
        return timed.get("copy_bytes", 0) + timed.get("transfer_bytes", 0) if bw else timed.get("matmul_flops", 0.0)

    def speed(self, function: str) -> str:
        return "bw" if MODULE[function] == "bw" else "peak"

    def fastest(self, function: str, timed: dict) -> float:
        """Bytes (bw) or FLOPs per second of the fastest span between clock readings that timed copies
        or matmuls (window.py); 0 when none did."""
        if MODULE[function] == "bw":
            return timed.get("copy_span_fastest") or 0.0
        return max((timed.get("matmul_span_rates") or [0.0])[-1], timed.get("matmul_span_fastest") or 0.0)

    def clean(self, function: str, timed: dict) -> float:
        return held_rate(function, timed)

    def say(self, key: str, **fields) -> str:
        what = "memory bandwidth" if MODULE[fields["function"]] == "bw" else "peak"
        return say(key, unit=unit(fields["function"]), what=what, **fields)

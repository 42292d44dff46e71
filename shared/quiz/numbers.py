"""Reading a numeric answer as people type it: "5.8k", "5,832", "5 832", "1.4e3", "about 43", "~43",
"43 tok/s", "3.35 TB/s", "273/16".

An answer is, spaces between the parts optional::

    [about | around | roughly | approximately | approx. | circa | ~ | ≈]  NUMBER  [/ NUMBER]  [MULTIPLIER]  [UNIT]

- NUMBER: digits with an optional decimal point and sign ("17", "17.5", ".5", "-3"); thousands in
  groups of three, separated by commas ("5,832", "1,371.4"), by spaces, thin or no-break spaces
  ("5 832") or by underscores; an exponent ("1.4e3", "1.4E-3", "1.4 x 10^3", "1.4×10^3", "1.4*10**3").
- "a / b" of two numbers is read as its value: "1/2" is 0.5 and "273/16" is 17.06, so the division
  you would say out loud is an answer. A zero denominator is refused.
- MULTIPLIER: k or K (thousand), M (million), and the words thousand, million, bn or billion,
  trillion. "B" after a number is bytes, never billions; a lowercase "m" alone is refused (milli or
  mega?).
- UNIT: read in any case, then converted into the question's unit: "3.35 TB/s" to a question in GB/s
  is 3,350, "0.0588 s" to a question in ms is 58.8. A unit of another kind (GB to a question in
  tokens/s) or an unknown one is refused.

Refused, each with a one-line reason (a ``ValueError``): an empty line; no number ("lots"); more
than one number ("43 44", "40-45"); a comma that is not a thousands separator ("5,8": write 5.8);
a unit of the wrong kind or one not known; a zero denominator; a number too large to be finite.

Units: SI prefixes are powers of 1000 (1 GB = 1e9 bytes, 1 TB/s = 1e12 bytes/s, 1 TFLOP/s = 1e12
FLOP/s); binary prefixes are powers of 1024 (1 KiB = 1024 bytes, 1 GiB = 2**30 bytes), as IEC
80000-13 defines them; 1 ms = 1e-3 s; 1% = 0.01x. The quiz never asks for bits, so b and B both
mean bytes.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass

#: What a question's unit measures, in words, for the one-line reasons.
KINDS = {
    "bytes": "a size", "bytes/s": "a bandwidth", "FLOP/s": "a compute rate", "FLOP/byte": "work per byte",
    "tokens/s": "a token rate", "s": "a time", "ratio": "a ratio", "streams": "a count of streams",
}

_SI = {"": 1.0, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12, "p": 1e15}
_BINARY = {"ki": 2.0**10, "mi": 2.0**20, "gi": 2.0**30, "ti": 2.0**40}
_SI_WORDS = {"kilo": 1e3, "mega": 1e6, "giga": 1e9, "tera": 1e12}
_BINARY_WORDS = {"kibi": 2.0**10, "mebi": 2.0**20, "gibi": 2.0**30, "tebi": 2.0**40}


def _units() -> dict[str, tuple[str, float]]:
    """Every spelling (lowercase, no spaces, "per second" as "/s") -> (kind, size in the kind's base)."""
    table: dict[str, tuple[str, float]] = {}
    for prefix, scale in {**_SI, **_BINARY}.items():
        for base in ("b", "byte", "bytes"):
            table[prefix + base] = ("bytes", scale)
            table[prefix + base + "/s"] = ("bytes/s", scale)
    for word, scale in {**_SI_WORDS, **_BINARY_WORDS}.items():
        for base in ("byte", "bytes"):
            table[word + base] = ("bytes", scale)
            table[word + base + "/s"] = ("bytes/s", scale)
    for prefix, scale in _SI.items():
        for base in ("flop/s", "flops"):          # TFLOPS is a rate; FLOPs per byte is spelled with /byte
            table[prefix + base] = ("FLOP/s", scale)
    for spelling in ("flop/byte", "flops/byte"):
        table[spelling] = ("FLOP/byte", 1.0)
    for spelling in ("tokens/s", "token/s", "tok/s", "toks/s", "t/s", "tps"):
        table[spelling] = ("tokens/s", 1.0)
    for names, scale in ((("s", "sec", "secs", "second", "seconds"), 1.0),
                         (("ms", "msec", "msecs", "millisecond", "milliseconds"), 1e-3),
                         (("us", "usec", "microsecond", "microseconds"), 1e-6),
                         (("min", "mins", "minute", "minutes"), 60.0)):
        for spelling in names:
            table[spelling] = ("s", scale)
    for spelling in ("x", "×", "times"):
        table[spelling] = ("ratio", 1.0)
    for spelling in ("%", "percent"):
        table[spelling] = ("ratio", 0.01)
    for spelling in ("stream", "streams", "sequence", "sequences", "request", "requests", "user", "users"):
        table[spelling] = ("streams", 1.0)
    return table


UNITS = _units()

_APPROX = re.compile(r"(?:about|around|roughly|approximately|approx\.?|circa|~|≈|≃)\s*", re.IGNORECASE)
_GROUPED = (r"\d{1,3}(?:,\d{3})+(?!\d)", r"\d{1,3}(?:[ \u00a0\u2009\u202f]\d{3})+(?!\d)", r"\d{1,3}(?:_\d{3})+(?!\d)")
_MANTISSA = "|".join(f"{g}(?:\\.\\d*)?" for g in _GROUPED) + r"|\d+(?:\.\d*)?|\.\d+"
_EXPONENT = r"[eE][-+]?\d+|\s*[x×*·]\s*10\s*(?:\^|\*\*)\s*[-+]?\d+"
_NUMBER = re.compile(rf"([-+]?)\s*({_MANTISSA})({_EXPONENT})?")
_OVER = re.compile(r"\s*/\s*(?=[\d.])")
_MULTIPLIER = re.compile(r"(k|K|M|thousand\b|million\b|billion\b|bn\b|trillion\b)\s*")
_MULTIPLIERS = {"k": 1e3, "K": 1e3, "M": 1e6, "thousand": 1e3, "million": 1e6, "billion": 1e9, "bn": 1e9,
                "trillion": 1e12}
_EXAMPLES = "such as 17, 1,371, 5.8k or 1.4e3"


def unit(spelling: str) -> tuple[str, float]:
    """(kind, size) of a unit as typed: unit("TB/s") == ("bytes/s", 1e12); KeyError when unknown."""
    return UNITS[_normal(spelling)]


def _normal(spelling: str) -> str:
    text = spelling.strip().rstrip(".").lower().replace("µ", "u").replace("μ", "u")
    text = re.sub(r"\s*(?:/|\bper\b)\s*(?:seconds?|secs?|s)$", "/s", text)
    text = re.sub(r"\s*(?:/|\bper\b)\s*(?:bytes?|b)$", "/byte", text)
    return re.sub(r"\s+", "", text)


def _value(match: re.Match) -> float:
    sign, mantissa, exponent = match.groups()
    digits = re.sub(r"[,_ \u00a0\u2009\u202f]", "", mantissa)
    power = re.search(r"[-+]?\d+$", exponent.strip()).group() if exponent else "0"
    value = float(f"{digits}e{power}")     # "1e999" is inf here, refused by the caller
    return -value if sign == "-" else value


def parse(text: str, question_unit: str) -> float:
    """The number an answer gives, in ``question_unit`` (one of UNITS' spellings, e.g. "tokens/s").

    "5.8k" -> 5800.0, "about 43" -> 43.0, "3.35 TB/s" with question_unit "GB/s" -> 3350.0.
    Raises ValueError with a one-line reason when the answer is not one number (see the module's
    docstring); KeyError when ``question_unit`` itself is not a known unit (a bug in the question).
    """
    question = _Question(question_unit, *unit(question_unit))
    shown = " ".join(text.split())
    clean = shown.replace("\u2212", "-")
    if not clean:
        raise ValueError(f"the line is empty: type a number, {_EXAMPLES}")
    approx = _APPROX.match(clean)
    rest = clean[approx.end():] if approx else clean
    first = _NUMBER.match(rest)
    if not first:
        raise ValueError(f"expected a number {_EXAMPLES}; got {shown!r}")
    value, rest = _value(first), rest[first.end():]
    over = _OVER.match(rest)
    second = _NUMBER.match(rest, over.end()) if over else None
    if second:
        denominator, rest = _value(second), rest[second.end():]
        if denominator == 0:
            raise ValueError(f"{shown!r} divides by zero")
        value /= denominator
    value *= _factor(rest, shown, question)
    if not math.isfinite(value):
        raise ValueError(f"{shown!r} is too large to be a number of {question_unit}")
    return value


@dataclass(frozen=True)
class _Question:
    spelling: str   # the question's unit as it is shown, e.g. "GB/s"
    kind: str       # a key of KINDS
    size: float     # its size in the kind's base unit (1e9 for GB/s)


def _factor(rest: str, shown: str, question: _Question) -> float:
    """What the text after the number multiplies it by, in the question's unit ("TB/s" -> 1000 for GB/s)."""
    spaced, rest = rest, rest.strip()
    if not rest:
        return 1.0
    if _normal(rest) in UNITS:
        return _convert(rest, shown, question)
    multiplier = _MULTIPLIER.match(rest)
    if multiplier:
        factor, after = _MULTIPLIERS[multiplier.group(1)], rest[multiplier.end():]
        if not after:
            return factor
        if _normal(after) in UNITS:
            return factor * _convert(after, shown, question)
    if re.match(r",\s*\d", rest):
        raise ValueError(f"in {shown!r} the comma is not a thousands separator (groups of three digits); "
                         "for a decimal, write a point: 5.8")
    if re.match(r"\s\d", spaced):
        raise ValueError(f"expected one number; got {shown!r} (two numbers? a space groups thousands "
                         "only in threes, as in 5 832)")
    if re.search(r"\d", rest):
        raise ValueError(f"expected one number; got {shown!r} (for a range, pick the value you would say)")
    hint = " (is it milli or mega? write ms or M)" if rest == "m" else ""
    raise ValueError(f"{rest!r} after the number is not a unit the quiz knows{hint}; answer in "
                     f"{question.spelling}, e.g. '43' or '43 {question.spelling}'")


def _convert(typed: str, shown: str, question: _Question) -> float:
    """How many of the question's unit one ``typed`` unit is; ValueError when it measures something else."""
    kind, size = UNITS[_normal(typed)]
    if kind != question.kind:
        bytes_hint = " (B is bytes; for billions write bn or e9)" if _normal(typed) == "b" else ""
        raise ValueError(f"{typed.strip()!r} in {shown!r} is {KINDS[kind]}; this question wants "
                         f"{KINDS[question.kind]} in {question.spelling}{bytes_hint}")
    return size / question.size

"""The interview card's statements, follow-up questions and spoken answers, loaded from
shared/data/quiz.yml and checked on load: a wrong key or type is one line naming the key and the file."""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from shared import yamlfile
from shared.quiz.drill import fmt
from shared.quiz.keypoints import NUMBERS, KeyPoint

PATH = Path(__file__).resolve().parents[1] / "data" / "quiz.yml"


class BankError(ValueError):
    """quiz.yml is malformed; the message names the file and the key."""


@dataclass(frozen=True)
class Statement:
    """Something a candidate might say; ``costs`` if saying it would cost the question."""

    text: str
    costs: bool
    why: str
    reread: str


@dataclass(frozen=True)
class FollowUp:
    """A follow-up question, the model answer revealed after the attempt, and its key points."""

    question: str
    answer: str
    reread: str
    key_points: tuple[KeyPoint, ...] = ()


@dataclass(frozen=True)
class Spoken:
    """A question to answer out loud in about ``seconds`` seconds, its model answer and key points."""

    question: str
    seconds: int
    answer: str
    reread: str
    key_points: tuple[KeyPoint, ...]


@dataclass(frozen=True)
class CardExample:
    """The interview card's worked example: ``params_read`` parameters per token at
    ``bits_per_weight`` bits each, ``bw_gbs`` GB/s (1e9 bytes/s) of memory bandwidth, ``batch`` streams."""

    params_read: float
    bits_per_weight: float
    bw_gbs: float
    batch: int
    source: str

    @property
    def gb_per_token(self) -> float:
        """Weight bytes read per token, in GB (1e9 bytes)."""
        return self.params_read * self.bits_per_weight / 8 / 1e9


@dataclass(frozen=True)
class Bank:
    tolerance: float          # relative, e.g. 0.05 = within 5% of the worked answer
    sections: tuple[str, ...]  # lesson section titles
    statements: tuple[Statement, ...]
    followups: tuple[FollowUp, ...]
    card_example: CardExample
    spoken: tuple[Spoken, ...] = ()
    spoken_slack: float = 0.25    # an answer up to this share over its seconds still counts as in time
    round_tolerance: float = 0.0  # a round figure of the answer ("roughly 40" for 42.9) this close counts


def _get(row: dict, key: str, kind, where: str):
    if not isinstance(row, dict) or key not in row:
        raise BankError(f"{PATH.name}: {where}: missing key {key!r}")
    value = row[key]
    if not isinstance(value, kind) or (kind is str and not value.strip()):
        raise BankError(f"{PATH.name}: {where}.{key}: expected {getattr(kind, '__name__', kind)}, got {value!r}")
    return value


def parse(data, path: Path = PATH) -> Bank:
    """A Bank from quiz.yml's parsed contents (BankError naming the key when malformed)."""
    tolerance = _get(data, "tolerance", (int, float), "top level")
    if not 0 < tolerance < 1:
        raise BankError(f"{path.name}: tolerance must be between 0 and 1, got {tolerance}")
    sections = tuple(_get(data, "sections", list, "top level"))
    if not all(isinstance(s, str) for s in sections):
        raise BankError(f"{path.name}: sections must be a list of strings")

    def reread(row, where):
        title = _get(row, "reread", str, where)
        if title not in sections:
            raise BankError(f"{path.name}: {where}.reread: {title!r} is not one of the sections")
        return title

    statements = tuple(
        Statement(text=_get(row, "text", str, f"statements[{i}]"), costs=_get(row, "costs", bool, f"statements[{i}]"),
                  why=_get(row, "why", str, f"statements[{i}]"), reread=reread(row, f"statements[{i}]"))
        for i, row in enumerate(_get(data, "statements", list, "top level")))
    example = _card_example(_get(data, "card_example", dict, "top level"), path)

    def points(row, where):
        rows = _get(row, "key_points", list, where)
        if len(rows) < 2:
            raise BankError(f"{path.name}: {where}.key_points: expected at least 2 key points, got {len(rows)}")
        return tuple(_key_point(r, f"{where}.key_points[{j}]", example, path) for j, r in enumerate(rows))

    followups = tuple(
        FollowUp(question=_get(row, "question", str, f"followups[{i}]"),
                 answer=_get(row, "answer", str, f"followups[{i}]"),
                 reread=reread(row, f"followups[{i}]"), key_points=points(row, f"followups[{i}]"))
        for i, row in enumerate(_get(data, "followups", list, "top level")))
    spoken = []
    for i, row in enumerate(_get(data, "spoken", list, "top level")):
        seconds = _get(row, "seconds", int, f"spoken[{i}]")
        if isinstance(seconds, bool) or seconds <= 0:
            raise BankError(f"{path.name}: spoken[{i}].seconds: expected a positive whole number, got {seconds!r}")
        spoken.append(Spoken(question=_get(row, "question", str, f"spoken[{i}]"), seconds=seconds,
                             answer=_fill(_get(row, "answer", str, f"spoken[{i}]"), example, f"spoken[{i}].answer",
                                          path),
                             reread=reread(row, f"spoken[{i}]"), key_points=points(row, f"spoken[{i}]")))
    slack = _get(data, "spoken_slack", (int, float), "top level")
    if isinstance(slack, bool) or not 0 <= slack < 1:
        raise BankError(f"{path.name}: spoken_slack must be at least 0 and below 1, got {slack!r}")
    rounded = _get(data, "round_figure_tolerance", (int, float), "top level")
    if isinstance(rounded, bool) or not tolerance <= rounded < 1:
        raise BankError(f"{path.name}: round_figure_tolerance must be at least tolerance and below 1, got {rounded!r}")
    return Bank(tolerance=float(tolerance), sections=sections, statements=statements, followups=followups,
                card_example=example, spoken=tuple(spoken), spoken_slack=float(slack),
                round_tolerance=float(rounded))


def card_values(ex: CardExample) -> dict[str, str]:
    """The card example's figures a text in quiz.yml may name in braces ({card_ceiling}, {params_b}, ...)."""

    values = {name: fmt(f(ex)) for name, f in NUMBERS.items()}
    values.update(params_b=f"{ex.params_read / 1e9:g}", bits=f"{ex.bits_per_weight:g}",
                  tbs=f"{ex.bw_gbs / 1000:g}", batch=str(ex.batch))
    return values


def _fill(text: str, ex: CardExample, where: str, path: Path) -> str:
    try:
        return text.format_map(card_values(ex))
    except (KeyError, ValueError, IndexError) as exc:
        raise BankError(f"{path.name}: {where}: unknown figure in braces ({exc}); known: "
                        f"{', '.join(sorted(card_values(ex)))}") from None


def _key_point(row, where: str, ex: CardExample, path: Path) -> KeyPoint:
    if not isinstance(row, dict):
        raise BankError(f"{path.name}: {where}: expected a mapping with 'point' and 'any' or 'number'")
    point = _fill(_get(row, "point", str, where), ex, f"{where}.point", path)
    ways = row.get("any", [])
    if not isinstance(ways, list) or not all(isinstance(w, str) and w.split() for w in ways):
        raise BankError(f"{path.name}: {where}.any: expected a list of words to look for, got {ways!r}")
    number = row.get("number")
    if number is not None and number not in NUMBERS:
        raise BankError(f"{path.name}: {where}.number: {number!r} is not one of {', '.join(NUMBERS)}")
    if not ways and number is None:
        raise BankError(f"{path.name}: {where}: needs 'any' (words to look for) or 'number'")
    return KeyPoint(point=point, any=tuple(tuple(w.lower().split()) for w in ways),
                    number=NUMBERS[number](ex) if number else None)


def _card_example(row: dict, path: Path) -> CardExample:
    def positive(key: str, kind=(int, float)):
        value = _get(row, key, kind, "card_example")
        if isinstance(value, bool) or not value > 0:
            raise BankError(f"{path.name}: card_example.{key}: expected a positive number, got {value!r}")
        return value
    return CardExample(params_read=positive("params_read"), bits_per_weight=positive("bits_per_weight"),
                       bw_gbs=positive("bw_gbs"), batch=positive("batch", int),
                       source=_get(row, "source", str, "card_example"))


@functools.cache
def load() -> Bank:
    """The bank in shared/data/quiz.yml."""
    with open(PATH, encoding="utf-8") as fh:
        return parse(yamlfile.safe_load(fh))

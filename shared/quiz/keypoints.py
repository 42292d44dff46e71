"""Key points of a free-text or spoken answer, and a first check of a typed answer for them.

A key point is what a good answer says, in a few words (``point``), with the ways of saying it that
the check looks for (``any``: each a few word beginnings that must all appear, in any order: "read
weight" finds "reads every weight"; "no$" is the whole word "no", not "now" or "nothing";
"no$+faster" those words in a row; "^no" the answer's first word, whole: "No: it is memory-bound"
answers a yes/no question) and, for a number, the value it must come within the quiz's
tolerance of (``number``: one of NUMBERS, computed from the card's example in shared/data/quiz.yml).
The check is a guide, not a verdict: it cannot see negation or sense, so the learner marks
themselves after seeing which points it found.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from shared.quiz import slips

#: The numbers a key point can ask for, from the card's example (``bank.CardExample``), in tokens/s.
NUMBERS = {
    "card_ceiling": lambda ex: ex.bw_gbs / ex.gb_per_token,
    "card_batch_total": lambda ex: ex.batch * ex.bw_gbs / ex.gb_per_token,
}

_WORD = re.compile(r"[a-z0-9]+")
_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?\s*(k\b)?")


@dataclass(frozen=True)
class KeyPoint:
    """One point a good answer makes; ``any``: word-beginning sets that show it; ``number``: a value
    (in the point's unit) an answer must state within the tolerance."""

    point: str
    any: tuple[tuple[str, ...], ...] = ()
    number: float | None = None

    def found_in(self, text: str, tolerance: float, round_tolerance: float = 0.0) -> bool:
        """True when ``text`` says one of the ways in ``any``, or states ``number`` within ``tolerance``
        (or as a round figure within ``round_tolerance``: "roughly 40" for 42.9, as a drill takes it)."""
        words = _WORD.findall(text.lower())
        for terms in self.any:
            if all(_says(words, t) for t in terms):
                return True
        if self.number is not None:
            return any(slips.right(v, self.number, tolerance, round_tolerance) for v in numbers_in(text))
        return False


def _says(words: list[str], term: str) -> bool:
    """Whether ``words`` hold ``term``: a word beginning; with "$" after it a whole word; with "^"
    before it the first word, whole; parts joined by "+", words one after another ("no$+faster")."""
    if term.startswith("^"):
        return bool(words) and words[0] == term[1:]
    parts = term.split("+")
    return any(all(_is(w, part) for w, part in zip(words[i:], parts))
               for i in range(len(words) - len(parts) + 1))


def _is(word: str, part: str) -> bool:
    return word == part[:-1] if part.endswith("$") else word.startswith(part)


def numbers_in(text: str) -> list[float]:
    """Every plain number in ``text``: "43", "42.9", "1,371", "1.4k" (thousands by k)."""
    out = []
    for whole, frac, k in _NUMBER.findall(text.lower()):
        value = float(whole.replace(",", "") + frac)
        out.append(value * 1000 if k else value)
    return out


def found(points, text: str, tolerance: float, round_tolerance: float = 0.0) -> list[bool]:
    """For each key point, whether ``text`` shows it."""
    return [p.found_in(text, tolerance, round_tolerance) for p in points]


def parse_checked(text: str, count: int) -> frozenset[int]:
    """The key points a learner checks off: numbers such as "1 3" or "1,3" (1-based), "all" or "none".

    Raises ValueError with the reason when the answer is not that.
    """
    word = text.strip().lower()
    if word == "all":
        return frozenset(range(1, count + 1))
    if word in ("none", "0", "-"):
        return frozenset()
    parts = [p for p in re.split(r"[\s,]+", word) if p]
    if not parts or not all(p.isdigit() for p in parts):
        raise ValueError(f"expected key point numbers such as '1 3', 'all' or 'none', got {text.strip()!r}")
    picked = [int(p) for p in parts]
    bad = [n for n in picked if not 1 <= n <= count]
    if bad:
        raise ValueError(f"key points are numbered 1 to {count}, got {bad[0]}")
    return frozenset(picked)

"""The interview card's part of the quiz: spot the statements that would cost you the question,
then answer follow-up questions and compare with the model answers."""
from __future__ import annotations

import random
import re

from shared.quiz.bank import Bank, FollowUp, Statement

#: Statements shown per session, and the least of each kind among them.
STATEMENTS_SHOWN = 6
AT_LEAST_EACH = 2
#: Follow-up questions per session.
FOLLOWUPS_ASKED = 3


def pick_statements(bank: Bank, rng: random.Random) -> list[Statement]:
    """STATEMENTS_SHOWN statements, at least AT_LEAST_EACH costly and AT_LEAST_EACH fine, shuffled."""
    costly = [s for s in bank.statements if s.costs]
    fine = [s for s in bank.statements if not s.costs]
    n_costly = rng.randint(AT_LEAST_EACH, STATEMENTS_SHOWN - AT_LEAST_EACH)
    chosen = rng.sample(costly, n_costly) + rng.sample(fine, STATEMENTS_SHOWN - n_costly)
    rng.shuffle(chosen)
    return chosen


def statements_of(bank: Bank, rng: random.Random, section: str) -> list[Statement]:
    """The statements that reread ``section`` (at most STATEMENTS_SHOWN), shuffled."""
    chosen = [s for s in bank.statements if s.reread == section]
    rng.shuffle(chosen)
    return chosen[:STATEMENTS_SHOWN]


def followups_of(bank: Bank, rng: random.Random, section: str) -> list[FollowUp]:
    """The follow-up questions that reread ``section`` (at most FOLLOWUPS_ASKED), shuffled."""
    chosen = [f for f in bank.followups if f.reread == section]
    rng.shuffle(chosen)
    return chosen[:FOLLOWUPS_ASKED]


def parse_spotted(text: str, count: int) -> frozenset[int]:
    """The statement numbers in an answer such as "2 5" or "2,5" (1-based), or "none".

    Raises ValueError with the reason when the answer is not that.
    """
    text = text.strip().lower()
    if text in ("none", "0", "-"):
        return frozenset()
    parts = [p for p in re.split(r"[\s,]+", text) if p]
    if not parts or not all(p.isdigit() for p in parts):
        raise ValueError(f"expected statement numbers such as '2 5' or 'none', got {text!r}")
    numbers = [int(p) for p in parts]
    bad = [n for n in numbers if not 1 <= n <= count]
    if bad:
        raise ValueError(f"statements are numbered 1 to {count}, got {bad[0]}")
    return frozenset(numbers)


def pick_followups(bank: Bank, rng: random.Random, weakness=None) -> list[FollowUp]:
    """FOLLOWUPS_ASKED follow-up questions in a random order; with ``weakness`` (section -> a sort key,
    higher is weaker) drawn from every follow-up, the weakest sections' first."""
    if weakness is None:
        return rng.sample(list(bank.followups), min(FOLLOWUPS_ASKED, len(bank.followups)))
    order = rng.sample(list(bank.followups), len(bank.followups))
    order.sort(key=lambda f: weakness(f.reread), reverse=True)     # stable: ties keep the random order
    return order[:FOLLOWUPS_ASKED]


def parse_self_mark(text: str) -> bool:
    """y/yes -> True, n/no -> False; ValueError otherwise."""
    word = text.strip().lower()
    if word in ("y", "yes"):
        return True
    if word in ("n", "no"):
        return False
    raise ValueError(f"expected y or n, got {text.strip()!r}")

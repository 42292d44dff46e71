"""One quiz session: the questions in order, marking with worked answers, the score, and the
lesson sections to reread. Everything is drawn from ``random.Random(seed)``, so a seed and the same
answers always give the same questions and the same score."""
from __future__ import annotations

import math
import random
import re
import textwrap
from collections import Counter
from dataclasses import dataclass, field

from shared.quiz import card, drills
from shared.quiz.answers import Ask, Stopped
from shared.quiz.bank import Bank, FollowUp, Statement

WIDTH = 88
_NUMBER = re.compile(r"^\s*([-+]?(?:\d[\d,_]*)?\.?\d+(?:[eE][-+]?\d+)?)")


def parse_number(text: str) -> float:
    """The number at the start of an answer ("17", "17.0 tokens/s", "1,371", "4.5e-2")."""
    match = _NUMBER.match(text)
    if not match:
        raise ValueError(f"expected a number, got {text.strip()!r}")
    value = float(match.group(1).replace(",", "").replace("_", ""))
    if not math.isfinite(value):
        raise ValueError(f"expected a finite number, got {text.strip()!r}")
    return value


def _free_text(text: str) -> str:
    if not text.strip():
        raise ValueError("expected your answer in words (or '-' for none)")
    return text.strip()


@dataclass(frozen=True)
class Plan:
    """The questions of one session."""

    seed: int
    drills: list[drills.Drill]
    statements: list[Statement]
    followups: list[FollowUp]

    def asks(self) -> list[Ask]:
        """Every answer the session needs, in order."""
        out = [Ask(f"drill {i}: a number in {d.unit}", parse_number) for i, d in enumerate(self.drills, 1)]
        n = len(self.statements)
        out.append(Ask("statement numbers or 'none'", lambda text: card.parse_spotted(text, n)))
        for i, _ in enumerate(self.followups, 1):
            out += [Ask(f"follow-up {i}: your attempt", _free_text),
                    Ask(f"follow-up {i}: y or n", card.parse_self_mark)]
        return out


def plan(bank: Bank, seed: int, rounds: int) -> Plan:
    """The questions for ``seed``: ``rounds`` drills, the statements, the follow-ups."""
    rng = random.Random(seed)
    return Plan(seed=seed, drills=drills.make(rng, rounds), statements=card.pick_statements(bank, rng),
                followups=card.pick_followups(bank, rng))


@dataclass
class Score:
    """Points per part and the sections of every miss."""

    drills: list[bool] = field(default_factory=list)
    statements: list[bool] = field(default_factory=list)
    followups: list[bool] = field(default_factory=list)
    misses: Counter = field(default_factory=Counter)
    complete: bool = True

    @property
    def points(self) -> int:
        return sum(self.drills) + sum(self.statements) + sum(self.followups)

    @property
    def asked(self) -> int:
        return len(self.drills) + len(self.statements) + len(self.followups)


def _say(write, text: str, indent: str = "") -> None:
    for line in textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ") or [""]:
        write(line)


def run(bank: Bank, p: Plan, source, write=print) -> Score:
    """Ask every question of ``p`` from ``source`` (TerminalAnswers or FileAnswers); return the score."""
    asks = p.asks()
    source.validate(asks)
    score = Score()
    pct = f"{bank.tolerance * 100:g}%"
    write(f"Interview self-check, seed {p.seed} (repeat it with --seed {p.seed}).")
    write(f"Numeric answers count as right within {pct} of the worked answer.")
    try:
        _drills(bank, p, source, asks, score, write)
        _statements(p, source, asks[len(p.drills)], score, write)
        _followups(p, source, asks[len(p.drills) + 1:], score, write)
    except Stopped:
        score.complete = False
        write("")
        write("(input ended: the quiz stops here)")
    _report(bank, score, write)
    return score


def _drills(bank, p, source, asks, score, write):
    write("")
    write(f"Part 1: drills ({len(p.drills)})")
    for i, (drill, ask) in enumerate(zip(p.drills, asks), 1):
        write("")
        _say(write, f"[{i}/{len(p.drills)}] {drill.prompt} (answer in {drill.unit})")
        value = source.get(ask)
        right = drill.accepts(value, bank.tolerance)
        score.drills.append(right)
        if not right:
            score.misses[drill.reread] += 1
        verdict = "right" if right else f"wrong (you said {drills.fmt(value)} {drill.unit})"
        _say(write, f"{verdict}: {drill.worked}", "  ")
        if not right:
            write(f"  reread: {drill.reread}")


def _statements(p, source, ask, score, write):
    write("")
    write("Part 2: which of these would cost you the question in an interview?")
    write("Answer with their numbers (e.g. '2 5'), or 'none'.")
    for i, s in enumerate(p.statements, 1):
        _say(write, f"{i}. {s.text}", "  ")
    spotted = source.get(ask)
    for i, s in enumerate(p.statements, 1):
        right = (i in spotted) == s.costs
        score.statements.append(right)
        if not right:
            score.misses[s.reread] += 1
        kind = "costs the question" if s.costs else "fine to say"
        if s.costs:
            verdict = "you spotted it" if right else "you missed it"
        else:
            verdict = "right, you let it stand" if right else "it is true: you flagged it"
        _say(write, f"{i}. {kind} ({verdict}): {s.why}", "  ")


def _followups(p, source, asks, score, write):
    write("")
    write("Part 3: follow-up questions. Answer in your own words (one line), read the model answer,")
    write("then mark yourself: y if your answer covered it, n if it did not.")
    for i, f in enumerate(p.followups, 1):
        write("")
        _say(write, f"[{i}/{len(p.followups)}] {f.question}")
        source.get(asks[2 * (i - 1)])
        _say(write, f"model answer: {f.answer}", "  ")
        write("  did your answer cover it? (y/n)")
        covered = source.get(asks[2 * (i - 1) + 1])
        score.followups.append(covered)
        if not covered:
            score.misses[f.reread] += 1


def _report(bank, score, write):
    write("")
    write(f"Score: {score.points}/{score.asked} (drills {sum(score.drills)}/{len(score.drills)}, "
          f"statements {sum(score.statements)}/{len(score.statements)}, "
          f"follow-ups {sum(score.followups)}/{len(score.followups)})")
    if not score.misses:
        write("Weak spots: none this time.")
        return
    write("Weak spots to reread in the lesson:")
    order = {title: i for i, title in enumerate(bank.sections)}
    for title, n in sorted(score.misses.items(), key=lambda kv: (-kv[1], order[kv[0]])):
        write(f"  - {title} ({n} miss{'es' if n > 1 else ''})")

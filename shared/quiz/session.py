"""One quiz session: the questions in order, marking with worked answers (a wrong number is told how
far off it is and, when it matches one, which classic slip it looks like), the score, the lesson
sections to reread, and a short re-drill of the weakest ones (``--focus SECTION``). Everything is
drawn from ``random.Random(seed)``, so a seed and the same answers always give the same questions
and the same score; with kept progress (``shared.quiz.progress``) the drills and follow-ups of the
weakest sections come first. A follow-up's attempt is checked for its key points before the model
answer is shown; the learner marks themselves after."""
from __future__ import annotations

import functools
import random
import textwrap
from collections import Counter
from dataclasses import dataclass, field

from shared.quiz import card, drills, keypoints, numbers, slips
from shared.quiz.answers import Ask, Stopped
from shared.quiz.bank import Bank, FollowUp, Statement

WIDTH = 88
#: Drills in a focused re-drill (``--focus``) unless --rounds says otherwise.
FOCUS_ROUNDS = 3
#: Weak sections the closing report offers a re-drill of.
REDRILL_OFFERED = 2
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
    focus: str | None = None

    def asks(self) -> list[Ask]:
        """Every answer the session needs, in order (no statement line when there are no statements)."""
        out = [Ask(f"drill {i}: a number in {d.unit}", functools.partial(numbers.parse, question_unit=d.unit))
               for i, d in enumerate(self.drills, 1)]
        n = len(self.statements)
        if n:
            out.append(Ask("statement numbers or 'none'", lambda text: card.parse_spotted(text, n)))
        for i, _ in enumerate(self.followups, 1):
            out += [Ask(f"follow-up {i}: your attempt", _free_text),
                    Ask(f"follow-up {i}: y or n", card.parse_self_mark)]
        return out


def plan(bank: Bank, seed: int, rounds: int, progress=None) -> Plan:
    """The questions for ``seed``: ``rounds`` drills, the statements, the follow-ups. With ``progress``
    (a ``shared.quiz.progress.Progress`` holding results) the weakest sections' drills and follow-ups
    come first."""
    rng = random.Random(seed)
    weakness = progress.rank if progress is not None and not progress.empty else None
    return Plan(seed=seed, drills=drills.make(rng, rounds, weakness), statements=card.pick_statements(bank, rng),
                followups=card.pick_followups(bank, rng, weakness))


class FocusError(ValueError):
    """--focus names no section, or several; the message is one line listing the choices."""


def focus_section(bank: Bank, text: str) -> str:
    """The section ``text`` names: its exact title, or the one title that contains it (any case)."""
    if text in bank.sections:
        return text
    hits = [s for s in bank.sections if text.strip().lower() in s.lower()] if text.strip() else []
    if len(hits) == 1:
        return hits[0]
    choices = "; ".join(f'"{s}"' for s in (hits or bank.sections))
    what = "matches several sections" if hits else "is not a section of the lesson"
    raise FocusError(f"--focus {text!r} {what}; choose one of: {choices}")


def focus_plan(bank: Bank, seed: int, section: str, rounds: int = FOCUS_ROUNDS) -> Plan:
    """A short re-drill of ``section``: up to ``rounds`` drills that reread it (none when no drill
    kind does), and every statement and follow-up question that rereads it."""
    rng = random.Random(seed)
    return Plan(seed=seed, drills=drills.make_focused(rng, rounds, section),
                statements=card.statements_of(bank, rng, section),
                followups=card.followups_of(bank, rng, section), focus=section)


@dataclass
class Score:
    """Points per part and the sections of every miss."""

    drills: list[bool] = field(default_factory=list)
    statements: list[bool] = field(default_factory=list)
    followups: list[bool] = field(default_factory=list)
    misses: Counter = field(default_factory=Counter)
    slips: Counter = field(default_factory=Counter)
    complete: bool = True
    progress: object = None     # a shared.quiz.progress.Progress that every result is recorded in

    def mark(self, part: list, section: str, right: bool) -> None:
        """Count one result in ``part`` (drills, statements or follow-ups), for ``section``."""
        part.append(right)
        if not right:
            self.misses[section] += 1
        if self.progress is not None:
            self.progress.record(section, right)

    @property
    def points(self) -> int:
        return sum(self.drills) + sum(self.statements) + sum(self.followups)

    @property
    def asked(self) -> int:
        return len(self.drills) + len(self.statements) + len(self.followups)


def _say(write, text: str, indent: str = "") -> None:
    for line in textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent + "  ") or [""]:
        write(line)


def run(bank: Bank, p: Plan, source, write=print, *, offer: bool = True, progress=None) -> Score:
    """Ask every question of ``p`` from ``source`` (TerminalAnswers or FileAnswers); return the score.

    With ``offer`` and weak spots, the report closes with the ``--focus`` commands that re-drill
    them, and a source that can offer (the terminal) asks whether to re-drill the weakest one now.
    Every result is recorded in ``progress`` (a ``Progress``) as it is marked; saving it is the caller's.
    """
    asks = p.asks()
    source.validate(asks)
    score = Score(progress=progress)
    pct = f"{bank.tolerance * 100:g}%"
    if p.focus:
        write(f"Re-drill of \"{p.focus}\", seed {p.seed} (repeat it with --focus \"{p.focus}\" --seed {p.seed}).")
    else:
        write(f"Interview self-check, seed {p.seed} (repeat it with --seed {p.seed}).")
    write(f"Numeric answers count as right within {pct} of the worked answer.")
    n_statements = 1 if p.statements else 0
    parts = iter(range(1, 4))    # a part without questions gets no header, and no number
    try:
        if p.drills:
            _drills(bank, p, source, asks, score, write, next(parts))
        if p.statements:
            _statements(p, source, asks[len(p.drills)], score, write, next(parts))
        if p.followups:
            _followups(bank, p, source, asks[len(p.drills) + n_statements:], score, write, next(parts))
    except Stopped:
        score.complete = False
        write("")
        write("(input ended: the quiz stops here)")
    weak = _report(bank, score, write)
    if offer and weak:
        _offer_redrill(bank, p, source, weak, write, progress)
    return score


def _drills(bank, p, source, asks, score, write, part):
    write("")
    write(f"Part {part}: drills ({len(p.drills)})")
    for i, (drill, ask) in enumerate(zip(p.drills, asks), 1):
        write("")
        _say(write, f"[{i}/{len(p.drills)}] {drill.prompt} (answer in {drill.unit})")
        value = source.get(ask)
        right = drill.accepts(value, bank.tolerance, bank.round_tolerance)
        score.mark(score.drills, drill.reread, right)
        if right:
            _say(write, f"right: {drill.worked}", "  ")
            continue
        off = slips.off_by(value, drill.answer)
        _say(write, f"wrong (you said {drills.fmt(value)} {drill.unit}, {off}): {drill.worked}", "  ")
        found = slips.matches(value, slips.distinct(drill.answer, drill.slips, bank.tolerance), bank.tolerance)
        if found:
            score.slips[found[0].name] += 1
            _say(write, f"the classic slip: {found[0].name}", "  ")
            for other in found[1:]:     # as near as makes no difference within the tolerance
                _say(write, f"or the classic slip: {other.name}", "  ")
        write(f"  reread: {drill.reread}")


def _statements(p, source, ask, score, write, part):
    write("")
    write(f"Part {part}: which of these would cost you the question in an interview?")
    write("Answer with their numbers (e.g. '2 5'), or 'none'.")
    for i, s in enumerate(p.statements, 1):
        _say(write, f"{i}. {s.text}", "  ")
    spotted = source.get(ask)
    for i, s in enumerate(p.statements, 1):
        right = (i in spotted) == s.costs
        score.mark(score.statements, s.reread, right)
        kind = "costs the question" if s.costs else "fine to say"
        if s.costs:
            verdict = "you spotted it" if right else "you missed it"
        else:
            verdict = "right, you let it stand" if right else "it is true: you flagged it"
        _say(write, f"{i}. {kind} ({verdict}): {s.why}", "  ")


def _followups(bank, p, source, asks, score, write, part):
    write("")
    write(f"Part {part}: follow-up questions. Answer in your own words (one line); your answer is checked")
    write("for the key points, then read the model answer and mark yourself: y if it covered them, n if not.")
    for i, f in enumerate(p.followups, 1):
        write("")
        _say(write, f"[{i}/{len(p.followups)}] {f.question}")
        attempt = source.get(asks[2 * (i - 1)])
        show_key_points(f.key_points, "" if attempt == "-" else attempt, bank, write)
        _say(write, f"model answer: {f.answer}", "  ")
        write("  did your answer cover it? (y/n)")
        covered = source.get(asks[2 * (i - 1) + 1])
        score.mark(score.followups, f.reread, covered)


def show_key_points(points, attempt: str, bank: Bank, write) -> list[bool]:
    """Write each key point, marked [x] where ``attempt`` shows it (a number to the bank's precision,
    as a drill judges it); return which it shows. The check looks for words and numbers, not sense:
    the learner's own mark decides."""
    seen = keypoints.found(points, attempt, bank.tolerance, bank.round_tolerance)
    if attempt:
        write(f"  key points found in your answer: {sum(seen)} of {len(points)} (a word check: you mark yourself)")
    else:
        write(f"  key points ({len(points)}):")
    for n, (point, hit) in enumerate(zip(points, seen), 1):
        _say(write, f"{n}. [{'x' if hit else ' '}] {point.point}", "    ")
    return seen


def _report(bank, score, write) -> list[str]:
    """Write the score, the slips and the weak spots; return the weak sections, weakest first."""
    write("")
    write(f"Score: {score.points}/{score.asked} (drills {sum(score.drills)}/{len(score.drills)}, "
          f"statements {sum(score.statements)}/{len(score.statements)}, "
          f"follow-ups {sum(score.followups)}/{len(score.followups)})")
    if score.slips:
        write("Classic slips in your answers:")
        for name, n in sorted(score.slips.items(), key=lambda kv: (-kv[1], kv[0])):
            _say(write, f"- {name}" + (f" ({n} times)" if n > 1 else ""), "  ")
    if not score.misses:
        write("Weak spots: none this time.")
        return []
    write("Weak spots to reread in the lesson:")
    order = {title: i for i, title in enumerate(bank.sections)}
    weak = [title for title, _ in sorted(score.misses.items(), key=lambda kv: (-kv[1], order[kv[0]]))]
    for title in weak:
        n = score.misses[title]
        write(f"  - {title} ({n} miss{'es' if n > 1 else ''})")
    return weak


def redrill_command(section: str, seed: int) -> str:
    """The command line of a short re-drill of ``section``."""
    return f'python -m shared.quiz --focus "{section}" --seed {seed}'


def _offer_redrill(bank, p, source, weak, write, progress):
    seed = p.seed + 1
    write("Re-drill the weakest, a short round each (new numbers, the same kinds of question):")
    for section in weak[:REDRILL_OFFERED]:
        write(f"  {redrill_command(section, seed)}")
    ask = getattr(source, "offer", None)
    if ask is None:
        return
    if ask(f'Re-drill "{weak[0]}" now? (y/n)'):
        write("")
        run(bank, focus_plan(bank, seed, weak[0]), source, write, offer=False, progress=progress)

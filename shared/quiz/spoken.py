"""Spoken answers against the clock (``python -m shared.quiz --spoken``): the interview card's short
(~20 s) and full (~40 s) answers and a few from its deeper levels, from shared/data/quiz.yml.

For each question: Enter starts the clock, you answer out loud, Enter stops it; then you may type
your key words, untimed, to have them checked for the key points. The time taken (the spoken
answer only, never the typing) is compared with the target
(``seconds``, with ``spoken_slack`` of grace), the model answer and the numbered key points are
shown, and you check off the ones you made. An answer counts when every key point is made in time.

The clock is a function returning seconds (``time.monotonic`` by default), passed in, so tests give
their own and never wait.
"""
from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from shared.quiz import keypoints
from shared.quiz.answers import Ask, Stopped
from shared.quiz.bank import Bank, Spoken
from shared.quiz.session import Score, _say, show_key_points

#: What an answers file says for "I spoke, typed nothing" (blank lines are skipped in a file).
NOTHING_TYPED = "-"
#: Answers per spoken question: start the clock, stop it, the key words (untimed), the points made.
ASKS = 4


@dataclass(frozen=True)
class SpokenPlan:
    """The spoken questions of one session, in order."""

    seed: int
    items: list[Spoken] = field(default_factory=list)

    def asks(self) -> list[Ask]:
        """Four answers per question: start the clock, stop it, the key words typed after it stopped
        (untimed), the points made."""
        out = []
        for i, item in enumerate(self.items, 1):
            n = len(item.key_points)
            out += [Ask(f"spoken {i}: start the clock (Enter, or any word)", str),
                    Ask(f"spoken {i}: stop the clock (Enter, or any word)", str),
                    Ask(f"spoken {i}: your key words, untimed (or Enter for none)", str.strip),
                    Ask(f"spoken {i}: key points you made ('1 3', 'all' or 'none')",
                        lambda text, n=n: keypoints.parse_checked(text, n))]
        return out


def plan(bank: Bank, seed: int, rounds: int | None = None, progress=None) -> SpokenPlan:
    """``rounds`` spoken questions (all by default) in a random order; with ``progress`` holding
    results, the weakest sections' first."""
    rng = random.Random(seed)
    items = rng.sample(list(bank.spoken), len(bank.spoken))
    if progress is not None and not progress.empty:
        items.sort(key=lambda s: progress.rank(s.reread), reverse=True)
    return SpokenPlan(seed=seed, items=items[:rounds] if rounds else items)


@dataclass
class SpokenScore:
    """Per question: whether it was made in time with every key point, the points made, the time taken."""

    score: Score = field(default_factory=Score)
    points_made: int = 0
    points_asked: int = 0
    seconds: list[float] = field(default_factory=list)


def timing(elapsed: float, target: int, slack: float) -> tuple[bool, str]:
    """(in time, what to say): within ``target`` x (1 + ``slack``) seconds counts as in time."""
    if elapsed <= target:
        return True, f"{elapsed:.0f} s of your {target} s: in time"
    over = elapsed - target
    if elapsed <= target * (1 + slack):
        return True, f"{elapsed:.0f} s against {target} s: {over:.0f} s over, within the grace"
    return False, f"{elapsed:.0f} s against {target} s: {over:.0f} s over; say less, in the key points' order"


def run(bank: Bank, p: SpokenPlan, source, write=print, *, clock=time.monotonic, progress=None) -> SpokenScore:
    """Ask every spoken question of ``p`` from ``source``, timing each with ``clock`` (seconds); every
    result is recorded in ``progress`` as it is marked (saving it is the caller's)."""
    asks = p.asks()
    source.validate(asks)
    result = SpokenScore(score=Score(progress=progress))
    write(f"Spoken answers, seed {p.seed} (repeat it with --spoken --seed {p.seed}).")
    write("For each question: press Enter to start the clock, answer OUT LOUD, press Enter when you finish.")
    write("Then, off the clock, type your key words to have them checked, and check off the key points you made.")
    try:
        for i, item in enumerate(p.items, 1):
            _one(bank, item, i, len(p.items), asks[ASKS * (i - 1): ASKS * i], source, write, clock, result)
    except Stopped:
        result.score.complete = False
        write("")
        write("(input ended: the quiz stops here)")
    _report(result, write)
    return result


def _one(bank, item, i, total, asks, source, write, clock, result):
    write("")
    _say(write, f"[{i}/{total}] ({item.seconds} s) {item.question}")
    write("  Enter starts the clock.")
    source.get(asks[0])
    started = clock()
    write("  Clock running: answer out loud, then Enter.")
    source.get(asks[1])
    elapsed = clock() - started          # the spoken answer only: the key words come after
    result.seconds.append(elapsed)
    in_time, said = timing(elapsed, item.seconds, bank.spoken_slack)
    write(f"  time: {said}")
    write("  Clock stopped. Your key words, to have them checked (Enter for none):")
    typed = source.get(asks[2])
    show_key_points(item.key_points, "" if typed in ("", NOTHING_TYPED) else typed, bank, write)
    _say(write, f"model answer (~{item.seconds} s): {item.answer}", "  ")
    write("  Which key points did you make? Their numbers, 'all' or 'none'.")
    made = source.get(asks[3])
    result.points_made += len(made)
    result.points_asked += len(item.key_points)
    complete = len(made) == len(item.key_points)
    result.score.mark(result.score.followups, item.reread, complete and in_time)
    missing = [n for n in range(1, len(item.key_points) + 1) if n not in made]
    if complete and in_time:
        write("  counted: every key point, in time")
    else:
        why = [f"key point{'s' if len(missing) > 1 else ''} {', '.join(map(str, missing))} missing"] if missing else []
        why += [] if in_time else ["over time"]
        write(f"  not counted: {'; '.join(why)}; reread: {item.reread}")


def _report(result, write):
    s = result.score
    write("")
    write(f"Spoken: {sum(s.followups)}/{len(s.followups)} answers with every key point in time; "
          f"key points made {result.points_made}/{result.points_asked}")
    if not s.misses:
        write("Weak spots: none this time.")
        return
    write("Weak spots to reread in the lesson:")
    for title, n in sorted(s.misses.items(), key=lambda kv: (-kv[1], kv[0])):
        write(f"  - {title} ({n} miss{'es' if n > 1 else ''})")

"""``python -m shared.quiz [--seed N] [--answers FILE] [--rounds N] [--focus SECTION | --spoken]
[--progress PATH | --no-progress]``.

Progress is kept between sessions (``shared.quiz.progress``) in ~/.why17-quiz.json, or in the
--progress PATH; a session answered from a file (--answers) or from input that is not a terminal
keeps it only when --progress names the file, so scripted runs never touch the learner's record.

Exit 0 when the quiz ran (whatever the score), 2 with one line on a bad argument (a --focus that
names no section or several), an answers file that does not fit the quiz, a progress file that
cannot be read or written, or a malformed shared/data/quiz.yml; 130 when interrupted (the answers
given so far are still kept in the progress file).
"""
from __future__ import annotations

import argparse
import random
import sys
import time

from shared.quiz import answers, bank, progress, session, spoken

PROG = "python -m shared.quiz"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, without the usage block
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def _whole(minimum: int, maximum: int | None = None):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        if value < minimum or (maximum is not None and value > maximum):
            top = f" and at most {maximum}" if maximum is not None else ""
            raise argparse.ArgumentTypeError(f"must be at least {minimum}{top}, got {value}")
        return value
    return parse


def parser() -> argparse.ArgumentParser:
    return _Parser(
        prog=PROG, formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Interview self-check for 'Why ~17 tokens per second?': numeric drills with worked\n"
                    "answers, the interview card's statements to judge, follow-up questions with model\n"
                    "answers, and the lesson sections to reread.",
        epilog=answers.__doc__.split("\n\n", 1)[1])


def main(argv=None, *, clock=time.monotonic) -> int:
    """Run the quiz; ``clock`` (seconds) times the spoken answers."""
    p = parser()
    p.add_argument("--seed", type=_whole(0), default=None,
                   help="repeat a session: same seed, same questions (default: a new random seed)")
    p.add_argument("--rounds", type=_whole(1, 50), default=None,
                   help=f"numeric drills (default 6; {session.FOCUS_ROUNDS} with --focus)")
    p.add_argument("--answers", metavar="FILE", default=None,
                   help="answer from FILE instead of the terminal (format below)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--focus", metavar="SECTION", default=None,
                      help="a short re-drill of one lesson section: its title, or a word of it that "
                           "names one section (e.g. 'KV cache', 'batching', 'prefill')")
    mode.add_argument("--spoken", action="store_true",
                      help="answer out loud against the clock (20 s and 40 s answers), then check off "
                           "the key points you made; --rounds N asks N of them (default all)")
    keep = p.add_mutually_exclusive_group()
    keep.add_argument("--progress", metavar="PATH", default=None,
                      help="keep progress between sessions in PATH (default ~/.why17-quiz.json on a terminal; "
                           "with --answers or piped input, kept only when this is given); weak sections "
                           "come first")
    keep.add_argument("--no-progress", action="store_true", help="neither read nor keep progress")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    kept = None
    try:
        questions = bank.load()
        if args.progress is not None:
            kept = progress.Progress.load(args.progress)
        elif not args.no_progress and not args.answers and sys.stdin.isatty():
            kept = progress.Progress.load(progress.default_path())
        source = answers.FileAnswers(args.answers) if args.answers else answers.TerminalAnswers()
        try:
            if args.spoken:
                spoken.run(questions, spoken.plan(questions, seed, args.rounds, kept), source, clock=clock,
                           progress=kept)
            else:
                if args.focus is not None:
                    section = session.focus_section(questions, args.focus)
                    the_plan = session.focus_plan(questions, seed, section, args.rounds or session.FOCUS_ROUNDS)
                else:
                    the_plan = session.plan(questions, seed, args.rounds or 6, kept)
                session.run(questions, the_plan, source, progress=kept)
        finally:
            if kept is not None and kept.added:
                kept.sessions += 1
                kept.save()
        if kept is not None:
            _say_progress(questions, kept)
    except (answers.AnswersError, bank.BankError, session.FocusError, progress.ProgressError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return 0


def _say_progress(questions: bank.Bank, kept: progress.Progress) -> None:
    weak = kept.weakest(questions.sections)
    print(f"Progress kept in {kept.path} ({kept.sessions} session{'s' if kept.sessions != 1 else ''}).")
    if weak:
        print("Weakest over recent sessions (they come first next time):")
        for title in weak[:3]:
            print(f"  - {title}: {kept.summary(title)}")

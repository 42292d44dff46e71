"""``python -m shared.quiz [--seed N] [--answers FILE] [--rounds N] [--focus SECTION]``.

Exit 0 when the quiz ran (whatever the score), 2 with one line on a bad argument (a --focus that
names no section or several), an answers file that does not fit the quiz, or a malformed
shared/data/quiz.yml; 130 when interrupted.
"""
from __future__ import annotations

import argparse
import random
import sys

from shared.quiz import answers, bank, session

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


def main(argv=None) -> int:
    p = parser()
    p.add_argument("--seed", type=_whole(0), default=None,
                   help="repeat a session: same seed, same questions (default: a new random seed)")
    p.add_argument("--rounds", type=_whole(1, 50), default=None,
                   help=f"numeric drills (default 6; {session.FOCUS_ROUNDS} with --focus)")
    p.add_argument("--answers", metavar="FILE", default=None,
                   help="answer from FILE instead of the terminal (format below)")
    p.add_argument("--focus", metavar="SECTION", default=None,
                   help="a short re-drill of one lesson section: its title, or a word of it that "
                        "names one section (e.g. 'KV cache', 'batching', 'prefill')")
    args = p.parse_args(argv)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(10**6)
    try:
        questions = bank.load()
        if args.focus is not None:
            section = session.focus_section(questions, args.focus)
            the_plan = session.focus_plan(questions, seed, section, args.rounds or session.FOCUS_ROUNDS)
        else:
            the_plan = session.plan(questions, seed, args.rounds or 6)
        source = answers.FileAnswers(args.answers) if args.answers else answers.TerminalAnswers()
        session.run(questions, the_plan, source)
    except (answers.AnswersError, bank.BankError, session.FocusError) as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    return 0

"""Questions asked of a person in the terminal, answered line by line: typed, piped on stdin, or
read from a file (``--answers FILE``, one answer a line), so a review runs the same in a test.

End of input stops the session where it stands (what was decided is already written).
"""
from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass
from typing import TextIO

from autograder.core.errors import UsageError


class Stop(Exception):
    """The person quit (``q``) or the input ended: stop asking, keep what is written."""


@dataclass
class Console:
    """Asks on ``out``, reads answers from ``into`` (one line each)."""

    into: TextIO
    out: TextIO

    def say(self, text: str = "") -> None:
        print(text, file=self.out, flush=True)

    def ask(self, prompt: str) -> str:
        """The next answer, stripped; Stop at the end of input or on ``q``."""
        self.out.write(prompt)
        self.out.flush()
        line = self.into.readline()
        if not line:
            self.out.write("\n")
            raise Stop("end of input")
        answer = line.strip()
        if not self.into.isatty():   # echo piped answers, so a transcript reads as a session
            self.out.write(answer + "\n")
        if answer.lower() == "q":
            raise Stop("quit")
        return answer

    def points(self, most: float, extra: str = "") -> float | None:
        """A number of points from 0 to ``most``, asked until one is given; None for ``s`` (skip)."""
        while True:
            text = self.ask(f"points (0-{most:g}{extra}, s skips, q quits): ")
            if text.lower() == "s":
                return None
            try:
                value = float(text)
            except ValueError:
                value = -1.0
            if 0 <= value <= most:
                return value
            self.say(f"  give a number from 0 to {most:g}")

    def reason(self, prompt: str = "reason (the student reads it): ") -> str:
        """A non-empty reason, asked until one is given."""
        while True:
            text = self.ask(prompt)
            if text:
                return text
            self.say("  a reason is required: the student sees it on their feedback page")


def open_answers(path: str | None):
    """The answers to read: the file ``path`` (``--answers``), else stdin (a context manager)."""
    if path is None:
        return contextlib.nullcontext(sys.stdin)
    try:
        return open(path, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"{path}: cannot read the answers (--answers: {exc.strerror or exc})") from None

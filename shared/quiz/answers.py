"""Where the quiz's answers come from: the terminal, or a file of answers for tests.

An answers file holds one answer per line, in the order the questions are asked; blank lines and
lines starting with '#' are skipped. A session of R drills asks, in order: R numeric answers, one
line of statement numbers ("2 5" or "none"), then for each of the 3 follow-up questions two lines:
your attempt (free text, "-" for none) and y or n (did it cover the model answer?). A re-drill
(--focus SECTION) asks the same way: its drills, its statements' line (when it shows any), and two
lines per follow-up question; it is never offered again from a file. A spoken session (--spoken)
asks four lines per question: one to start the clock (any word, e.g. "go"), one to stop it (any
word, e.g. "stop"), your key words typed after the clock stopped ("-" for none), and the key points
you made ("1 3", "all" or "none").

Numbers are read as people type them: 5.8k, 5,832, 5 832, 1.4e3, about 43, ~43, 43 tok/s, a unit
converted into the question's (3.35 TB/s to a question in GB/s is 3,350), a fraction (273/16).
Refused with a one-line hint: an empty line, no number, two numbers, 5,8 (write 5.8), a unit of
another kind. docs/quiz.md has the whole list.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable


class AnswersError(ValueError):
    """The answers file cannot serve this quiz; the message is one line naming the file and line."""


class Stopped(Exception):
    """The terminal closed its input (end of file): the quiz stops where it is."""


@dataclass(frozen=True)
class Ask:
    """One answer the quiz needs: what it is, and how to read it (ValueError with the reason)."""

    what: str
    parse: Callable[[str], object]


class TerminalAnswers:
    """Asks on the terminal; an answer that cannot be read is asked again."""

    def __init__(self, read=input, write=print):
        self._read, self._write = read, write

    def validate(self, asks: list[Ask]) -> None:
        """Nothing to check in advance on a terminal."""

    def get(self, ask: Ask):
        while True:
            try:
                text = self._read("  your answer> ")
            except EOFError:
                raise Stopped() from None
            try:
                return ask.parse(text)
            except ValueError as exc:
                self._write(f"  ({exc}; try again)")

    def offer(self, question: str) -> bool:
        """Ask a yes/no question; end of input, or anything but y/yes, is no."""
        self._write(question)
        try:
            text = self._read("  your answer> ")
        except EOFError:
            return False
        return text.strip().lower() in ("y", "yes")


class FileAnswers:
    """Answers read from a file, checked against every question before the quiz starts."""

    def __init__(self, path: str | Path, write=print):
        self.path, self._write = Path(path), write
        try:
            text = self.path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise AnswersError(f"answers file {self.path}: cannot read it ({reason})") from None
        self._lines = [(n, line.strip()) for n, line in enumerate(text.splitlines(), 1)
                       if line.strip() and not line.lstrip().startswith("#")]
        self._next = 0

    def validate(self, asks: list[Ask]) -> None:
        """AnswersError unless there is exactly one readable answer per question."""
        if len(self._lines) != len(asks):
            raise AnswersError(f"answers file {self.path} has {len(self._lines)} answers; this quiz asks "
                               f"for {len(asks)} (see `python -m shared.quiz --help` for the order)")
        for (number, text), ask in zip(self._lines, asks):
            try:
                ask.parse(text)
            except ValueError as exc:
                raise AnswersError(f"answers file {self.path} line {number} ({ask.what}): {exc}") from None

    def get(self, ask: Ask):
        _, text = self._lines[self._next]
        self._next += 1
        self._write(f"  your answer> {text}")
        return ask.parse(text)

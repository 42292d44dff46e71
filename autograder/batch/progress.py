"""grade-all's progress bar: done/total, rate, time left and the last result, on one line (a line
each when the stream is not a tty)."""
from __future__ import annotations

import sys
import time
from typing import TextIO

from autograder.core import terminal


class Progress:
    """done/total, rate, time left and the last result, on one line (a line each when not a tty)."""

    def __init__(self, total: int, stream: TextIO | None = None, width: int = 24):
        self.total = total
        self.done = 0
        self.timed = 0          # steps that took grading (zeros given without grading do not)
        self.stream = stream if stream is not None else sys.stderr
        self.width = width
        self.started = time.monotonic()
        self.tty = hasattr(self.stream, "isatty") and self.stream.isatty()

    def line(self, last: str = "") -> str:
        elapsed = max(time.monotonic() - self.started, 1e-9)
        per_s = self.timed / elapsed
        rate = per_s * 60
        left = (self.total - self.done) / per_s if per_s > 0 else None
        filled = int(self.width * self.done / self.total) if self.total else self.width
        bar = "#" * filled + "." * (self.width - filled)
        eta = clock(left) if left is not None else "--:--"
        tail = f"  last: {last}" if last else ""
        return f"[{bar}] {self.done}/{self.total}  {rate:.1f}/min  left {eta}{tail}"

    def step(self, last: str = "", graded: bool = True) -> None:
        """One more student finished; ``graded`` False for a zero given without grading (it does
        not count in the rate)."""
        self.done += 1
        self.timed += bool(graded)
        text = self.line(terminal.clean(last))
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
            if self.done == self.total:
                self.stream.write("\n")
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def print_over(self, line: str) -> None:
        """``line`` on a line of its own, above the bar when it redraws itself in place (a tty)."""
        line = terminal.clean(line)
        if self.tty:
            self.stream.write("\r\x1b[K" + line + "\n" + self.line())
        else:
            self.stream.write(line + "\n")
        self.stream.flush()


def clock(seconds: float) -> str:
    """``seconds`` as h:mm:ss, or m:ss under an hour."""
    seconds = int(round(seconds))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m}:{s:02d}"

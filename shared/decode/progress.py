"""Progress of a benchmark run on stderr: one bar per phase, with the time spent and the time left.

The results go to stdout; progress never does, so ``python -m shared.decode_bench > run.txt`` keeps
only the results. On a terminal each phase redraws one line in place; elsewhere (a log, a notebook
cell, a pipe) it writes a line when the phase starts, at each quarter of its work, and when it ends.
The time left is the time per unit so far times the units left (seconds).
"""
from __future__ import annotations

import sys
import time
from typing import Callable, TextIO

#: Width of the bar, in characters.
BAR = 24
#: Fractions of a phase at which a stream that is not a terminal gets a line.
QUARTERS = (0.25, 0.5, 0.75)


def seconds_text(seconds: float) -> str:
    """'4.2 s' under ten seconds, '42 s' under two minutes, else '3 min 05 s'."""
    seconds = max(0.0, seconds)
    if seconds < 10:
        return f"{seconds:.1f} s"
    if seconds < 120:
        return f"{seconds:.0f} s"
    return f"{int(seconds // 60)} min {int(seconds % 60):02d} s"


class Phase:
    """One phase of ``total`` units (steps, repeats, tensors); ``advance`` after each unit."""

    def __init__(self, owner: Progress, name: str, total: int, unit: str):
        self.owner, self.name, self.total, self.unit = owner, name, max(1, total), unit
        self.done = 0
        self.started = owner.clock()
        self._quarter = 0
        owner.line(f"{name}: {self.total} {unit} ...", final=False)

    def left_s(self) -> float | None:
        """Seconds left at the pace so far, or None before the first unit is done."""
        if not self.done:
            return None
        spent = self.owner.clock() - self.started
        return spent / self.done * (self.total - self.done)

    def text(self) -> str:
        filled = round(BAR * self.done / self.total)
        spent = self.owner.clock() - self.started
        left = self.left_s()
        eta = f", about {seconds_text(left)} left" if left is not None and self.done < self.total else ""
        return (f"{self.name}: [{'#' * filled}{'.' * (BAR - filled)}] {self.done}/{self.total} {self.unit}, "
                f"{seconds_text(spent)}{eta}")

    def advance(self, units: int = 1) -> None:
        self.done = min(self.total, self.done + units)
        if self.owner.live:
            self.owner.line(self.text(), final=False)
        elif self._quarter < len(QUARTERS) and self.done < self.total \
                and self.done / self.total >= QUARTERS[self._quarter]:
            while self._quarter < len(QUARTERS) and self.done / self.total >= QUARTERS[self._quarter]:
                self._quarter += 1
            self.owner.line(self.text(), final=True)

    def finish(self) -> None:
        self.done = self.total
        spent = self.owner.clock() - self.started
        self.owner.line(f"{self.name}: done in {seconds_text(spent)}", final=True)


class Progress:
    """Where progress goes: ``stream`` (default stderr), redrawn in place when it is a terminal."""

    def __init__(self, stream: TextIO | None = None, *, live: bool | None = None,
                 clock: Callable[[], float] = time.monotonic):
        self.stream = stream if stream is not None else sys.stderr
        self.live = self.stream.isatty() if live is None else live
        self.clock = clock
        self._open = False

    def line(self, text: str, *, final: bool) -> None:
        """Write ``text``: in place on a terminal until ``final``, else as a line of its own."""
        if self.live:
            self.stream.write(f"\r\033[K{text}" + ("\n" if final else ""))
            self._open = not final
        elif final or text.endswith("..."):
            self.stream.write(text + "\n")
        self.stream.flush()

    def note(self, text: str) -> None:
        """A line of its own (a plan, an estimate)."""
        if self._open:
            self.stream.write("\n")
            self._open = False
        self.stream.write(text + "\n")
        self.stream.flush()

    def phase(self, name: str, total: int, unit: str) -> Phase:
        return Phase(self, name, total, unit)


class Silent:
    """No progress at all (the library default: the notebook and the tests ask for none)."""

    def note(self, text: str) -> None:
        pass

    def phase(self, name: str, total: int, unit: str) -> _SilentPhase:
        return _SilentPhase()


class _SilentPhase:
    def advance(self, units: int = 1) -> None:
        pass

    def finish(self) -> None:
        pass

"""The commands a markdown page shows: its ``sh`` fences, read line by line (the convention of
docs/maintaining.md, "Commands in the docs"; tests/test_docs_commands.py checks them, and
tests/lessons/why17/test_student_readme_commands.py runs the student README's)."""
from __future__ import annotations

import shlex
from dataclasses import dataclass

#: Fence tags whose lines are commands.
COMMAND_TAGS = ("sh",)


@dataclass(frozen=True)
class Command:
    """One command of a page: where it is (page name, 1-based line), its text, the fence's index."""

    page: str
    line: int
    text: str
    fence: int

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.text, comments=True)


def fences(text: str) -> list[tuple[int, str, list[tuple[int, str]]]]:
    """The fenced blocks of a markdown text: (opening line, tag, [(line number, line), ...])."""
    out, current = [], None
    for number, line in enumerate(text.splitlines(), start=1):
        stripped = line.strip()
        if stripped.startswith("```"):
            if current is None:
                current = (number, stripped[3:].strip(), [])
            else:
                out.append(current)
                current = None
        elif current is not None:
            current[2].append((number, line))
    if current is not None:
        out.append(current)
    return out


def extract(text: str, page: str = "<text>") -> list[Command]:
    """Every command of the ``sh`` fences, continuation lines joined, comments and blanks skipped."""
    commands = []
    for index, (_start, tag, lines) in enumerate(fences(text)):
        if tag not in COMMAND_TAGS:
            continue
        pending, first = "", 0
        for number, line in lines:
            if not pending:
                first = number
            body = line.rstrip()
            if body.endswith("\\"):
                pending += body[:-1] + " "
                continue
            whole = (pending + body).strip()
            pending = ""
            if whole and shlex.split(whole, comments=True):
                commands.append(Command(page, first, whole, index))
    return commands

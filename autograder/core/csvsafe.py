"""Spreadsheet-safe CSV: every CSV file the grader writes goes through this module's writers.

The rule (OWASP's "CSV Injection" guidance): a text cell that starts with ``=``, ``+``, ``-``,
``@``, a tab or a carriage return would be read by Excel, LibreOffice or Google Sheets as a formula
(``=HYPERLINK(...)``, ``+cmd|' /C calc'!A0``, ``@SUM(...)``), so it is written with a single quote
in front (``'=HYPERLINK(...)``), which the spreadsheet shows as text. Text cells are everything that
can come from a student or an LMS export (names, SIDs, emails, folder names, notes), and the
grader's own words too: one rule, no list of trusted columns to keep up to date.

Numbers the grader computed itself (scores and points, negative ones included: -2.5 points) stay
numbers: they are written as ints or floats, or as a ``Number``, the grader's own formatting of one
(``number(-2.5)`` is written ``-2.5``). Nothing read from a submission or an export may become a
``Number``.
"""
from __future__ import annotations

import csv
from collections.abc import Iterable
from typing import TextIO

#: First characters that make a spreadsheet read a cell as a formula.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
#: What is put in front of such a cell.
QUOTE = "'"


class Number(str):
    """A number as the grader formatted it (``"-2.5"``, ``"100"``): written as it is."""


def number(x: float, places: int = 2) -> Number:
    """``x`` (points, a score) rounded to ``places`` decimals, without trailing zeros."""
    return Number(f"{round(x, places):g}")


def neutral(text: str) -> str:
    """``text`` as a cell no spreadsheet evaluates: a quote in front when it starts with a
    formula character, else unchanged."""
    return QUOTE + text if text.startswith(FORMULA_STARTS) else text


def cell(value):
    """What is written for ``value``: text neutralised (``neutral``); a ``Number``, an int or
    float, or None (an empty cell) unchanged."""
    if isinstance(value, str) and not isinstance(value, Number):
        return neutral(value)
    return value


def restore(text: str) -> str:
    """The value ``neutral`` was given, from the text it wrote: exact for any value that does not
    itself start with a quote followed by a formula character (a student folder name never does:
    autograder/classdata/discover.safe_name allows no quote)."""
    if text.startswith(QUOTE) and text[len(QUOTE):].startswith(FORMULA_STARTS):
        return text[len(QUOTE):]
    return text


class Writer:
    """``csv.writer`` on ``stream`` (``\\n`` line ends) whose every cell passes through ``cell``."""

    def __init__(self, stream: TextIO):
        self._writer = csv.writer(stream, lineterminator="\n")

    def writerow(self, row: Iterable) -> None:
        self._writer.writerow([cell(v) for v in row])

    def writerows(self, rows: Iterable[Iterable]) -> None:
        for row in rows:
            self.writerow(row)


class DictWriter:
    """``csv.DictWriter`` on ``stream`` (``\\n`` line ends) whose every cell, header included,
    passes through ``cell``; a missing key is an empty cell, an unknown key a ValueError."""

    def __init__(self, stream: TextIO, fieldnames: Iterable[str]):
        self.fieldnames = list(fieldnames)
        self._writer = Writer(stream)

    def writeheader(self) -> None:
        self._writer.writerow(self.fieldnames)

    def writerow(self, row: dict) -> None:
        unknown = [k for k in row if k not in self.fieldnames]
        if unknown:
            raise ValueError(f"dict contains fields not in fieldnames: {', '.join(map(repr, unknown))}")
        self._writer.writerow([row.get(k, "") for k in self.fieldnames])

    def writerows(self, rows: Iterable[dict]) -> None:
        for row in rows:
            self.writerow(row)

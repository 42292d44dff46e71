"""Text from a download on the TA's terminal: control characters are shown, never obeyed.

Folder, file and student names come from students and LMS exports. Printed raw, an escape
sequence in one (``ESC ] 0 ;`` retitles the window, ``ESC [ 2 J`` clears the screen, a carriage
return overwrites the line before it, a bidirectional override reverses what follows) would act
on the TA's terminal or hide a line. ``clean`` writes each such character as its Python escape
(``\\x1b``); grade-all's messages go through ``CleanStream`` and its progress bar through ``clean``.
"""
from __future__ import annotations

import re

#: C0 controls but tab and newline, DEL, C1 controls (0x9b is a one-byte CSI), and the Unicode
#: bidirectional embeddings, overrides and isolates.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """``text`` with every control character written as its escape (``\\x1b``, ``\\u202e``)."""
    return _CONTROL.sub(lambda m: ascii(m.group())[1:-1], text)


def shown(name: str, most: int = 60, quoted: bool = False) -> str:
    """``name`` (of a file, a zip entry: the student's) as a one-line message shows it: written as
    Python writes it when a character does not print (a newline, a tab), in quotes with ``quoted``,
    and cut to its last ``most`` characters after '...' (a zip may name a file with 64 KiB)."""
    text = ascii(name) if not name.isprintable() else repr(name)
    quote, inner = text[0], text[1:-1]
    inner = inner if len(inner) <= most else "..." + inner[-most:]
    return f"{quote}{inner}{quote}" if quoted else inner


class CleanStream:
    """A text stream that writes through ``clean``: what is printed to it cannot drive the
    terminal. ``raw`` is the stream under it."""

    def __init__(self, raw):
        self.raw = raw

    def write(self, text: str) -> int:
        return self.raw.write(clean(text))

    def flush(self) -> None:
        self.raw.flush()

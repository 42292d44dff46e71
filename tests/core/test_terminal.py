"""Names from a download reach the TA's terminal shown, never obeyed (autograder/core/terminal.py):
grade-all's messages and its progress bar carry no raw control character from a folder name."""
from __future__ import annotations

import io
import re

from autograder.batch.options import BatchOptions
from autograder.batch.run import grade_all
from autograder.core import terminal

#: Retitle the window, clear the screen, overwrite the line, a one-byte CSI, reverse what follows.
HOSTILE = "eve\x1b]0;pwned\x07\x1b[2J\rok\x9b31m\u202e"
RAW = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def test_clean_shows_every_control_character_as_its_escape():
    assert terminal.clean(HOSTILE) == "eve\\x1b]0;pwned\\x07\\x1b[2J\\rok\\x9b31m\\u202e"
    assert terminal.clean("tab\tand\nnewline stay") == "tab\tand\nnewline stay"


def test_grade_all_prints_no_raw_control_character_from_a_folder_name(tmp_path):
    klass = tmp_path / "class"
    (klass / HOSTILE).mkdir(parents=True)           # nothing to grade: a zero, named on the progress line
    (klass / f"{HOSTILE}.txt").write_text("hi\n")   # a stray file: a note naming it
    stream = io.StringIO()
    grade_all(klass, tmp_path / "out", BatchOptions(jobs=1), stream=stream)
    text = stream.getvalue()
    assert "eve\\x1b]0;pwned\\x07" in text
    assert not RAW.search(text.replace("\r\x1b[K", "")), repr(text)

"""The hand-graded questions of an assignment's notebook and a student's answers to them.

The questions are the release notebook's (assignments/<folder>/<notebook>.ipynb) nbgrader
"manually graded answer" cells: markdown cells whose ``nbgrader`` metadata has ``grade`` and
``solution`` true (autograder/exports/nbgrader_cells.py writes them; for why17 the five Explain
It Back questions, ``explain-it-back-1`` ... ``-5``). The question is the cell's text without its
``YOUR ANSWER HERE`` stub.

A student's answer is the cell of their notebook with the same ``grade_id`` (nbgrader's own key
for a cell; the release marks the cells undeletable), less the question's text; a cell whose
metadata was lost is found by the question's first line. Their notebook is read from the same
files the grader graded (autograder/core/submission.py: a folder or a zip, at any depth).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from autograder.core import submission
from autograder.core.errors import UsageError

#: What the release puts in an answer cell for the student to replace (nbgrader's stub).
STUB = "YOUR ANSWER HERE"


@dataclass(frozen=True)
class Question:
    """One hand-graded question: its nbgrader ``grade_id``, its ``number`` (1, 2, ... in the
    notebook's order) and its ``text`` as the release shows it."""

    grade_id: str
    number: int
    text: str


@dataclass(frozen=True)
class Answer:
    """A student's answer to one question: ``text`` ('' when none), and ``missing``: why there
    is none ('' when there is one)."""

    text: str
    missing: str = ""


def notebook_name(asg) -> str:
    """The notebook a submission of ``asg`` hands in (course.yml's task ``files``);
    UsageError when it hands in none."""
    names = [n for n in asg.handed_in if n.endswith(".ipynb")]
    if not names:
        raise UsageError(f"assignment {asg.name}: no notebook among the files handed in "
                         f"(course.yml's task files), so there is no hand-graded answer to review")
    return names[0]


def _source(cell: dict) -> str:
    src = cell.get("source", "")
    return "".join(src) if isinstance(src, list) else str(src)


def _grade_id(cell: dict) -> str:
    meta = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    nb = meta.get("nbgrader") if isinstance(meta.get("nbgrader"), dict) else {}
    return str(nb.get("grade_id", "")) if nb.get("grade") and nb.get("solution") else ""


def questions(asg) -> tuple[Question, ...]:
    """The hand-graded questions of ``asg``'s release notebook, in order; UsageError when the
    release has no such notebook or it holds none."""
    path = Path(asg.root) / "assignments" / asg.folder / notebook_name(asg)
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read the release notebook ({exc}); run "
                         f"'python -m autograder generate'") from None
    found = []
    for cell in nb.get("cells", []):
        grade_id = _grade_id(cell)
        if grade_id and cell.get("cell_type") == "markdown":
            text = _source(cell).replace(STUB, "").strip()
            found.append(Question(grade_id, len(found) + 1, text))
    if not found:
        raise UsageError(f"{path}: no hand-graded answer cell (nbgrader 'manually graded answer')")
    return tuple(found)


def _first_line(text: str) -> str:
    return next((line.strip() for line in text.splitlines() if line.strip()), "")


def answer_in(nb: dict, question: Question) -> Answer:
    """``question``'s answer in the student's notebook ``nb``."""
    cells = [c for c in nb.get("cells", []) if isinstance(c, dict)]
    cell = next((c for c in cells if _grade_id(c) == question.grade_id), None)
    head = _first_line(question.text)
    if cell is None and head:
        cell = next((c for c in cells if c.get("cell_type") == "markdown" and head in _source(c)), None)
    if cell is None:
        return Answer("", "the answer cell is not in the notebook")
    text = _source(cell)
    if text.strip().startswith(question.text):
        text = text.strip()[len(question.text):]
    elif head and text.strip().startswith(head):
        text = text.strip()[len(head):]
    text = text.strip()
    if not text or text == STUB:
        return Answer("", "not answered (the cell still says YOUR ANSWER HERE)" if STUB in _source(cell)
                      else "not answered")
    return Answer(text)


def answers_of(path: Path | None, asg, qs: tuple[Question, ...]) -> dict[str, Answer]:
    """grade_id -> the student's answer, from the submission at ``path`` (a folder or a zip,
    read as the grader reads it); each missing, with why, when there is no notebook to read."""
    name = notebook_name(asg)
    if path is None:
        return {q.grade_id: Answer("", "nothing was handed in") for q in qs}
    try:
        with submission.load(path, expected=asg.handed_in) as sub:
            nb_path = sub.folder / name
            if not nb_path.is_file():
                why = f"no {name} in the submission"
                return {q.grade_id: Answer("", why) for q in qs}
            try:
                nb = json.loads(nb_path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                why = f"{name} is not a readable notebook ({type(exc).__name__})"
                return {q.grade_id: Answer("", why) for q in qs}
    except UsageError as exc:   # a zip the grader refused too: the same reason
        return {q.grade_id: Answer("", str(exc)) for q in qs}
    if not isinstance(nb, dict):
        return {q.grade_id: Answer("", f"{name} is not a notebook") for q in qs}
    return {q.grade_id: answer_in(nb, q) for q in qs}

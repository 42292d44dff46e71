"""Generate the student release: solutions/<folder> -> assignments/<folder>.

Each ``### BEGIN SOLUTION`` ... ``### END SOLUTION`` region becomes a stub that raises
NotImplementedError naming its task (``task1.1: copy_bandwidth``), at the marker's indentation;
signatures and docstrings stay as they are. The notebook becomes what nbgrader's release would make
of it, nbgrader cell metadata included (autograder/exports/nbgrader_cells.py).
Other files are copied unchanged. Nested or unterminated regions raise GenerateError.
"""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from autograder.core.course import Assignment
from autograder.exports import nbgrader_cells

BEGIN = "### BEGIN SOLUTION"
END = "### END SOLUTION"
SKIP = {"__pycache__", ".pytest_cache", ".hypothesis", ".ipynb_checkpoints", "measurements.json"}
_DEF = re.compile(r"^\s*def\s+(\w+)\s*\(")


class GenerateError(Exception):
    """A solution file whose regions cannot be turned into stubs."""


def strip_regions(text: str, where: str, label_for) -> str:
    """``text`` with each solution region replaced by a stub.

    ``label_for(function_name)`` gives the stub's message for a region inside ``def
    function_name`` (None when the region is not inside a function); ``where`` names the file
    in errors.
    """
    out: list[str] = []
    lines = text.splitlines(keepends=True)
    inside_since = None
    function = None
    for number, line in enumerate(lines, 1):
        match = _DEF.match(line)
        if match and inside_since is None:
            function = match.group(1)
        stripped = line.strip()
        if stripped == BEGIN:
            if inside_since is not None:
                raise GenerateError(f"{where}:{number}: nested {BEGIN} (region opened on line {inside_since})")
            inside_since = number
            indent = line[: len(line) - len(line.lstrip())]
            message = label_for(function if indent else None)
            out.append(f"{indent}raise NotImplementedError({message!r})\n")
        elif stripped == END:
            if inside_since is None:
                raise GenerateError(f"{where}:{number}: {END} without a {BEGIN}")
            inside_since = None
        elif inside_since is None:
            out.append(line)
    if inside_since is not None:
        raise GenerateError(f"{where}:{inside_since}: {BEGIN} is never closed by {END}")
    return "".join(out)


def _python_labeller(assignment: Assignment, module: str, where: str):
    def label_for(function):
        if function is None:
            raise GenerateError(f"{where}: a solution region outside a function; put it inside a def")
        name = f"{module}.{function}"
        task = assignment.task_of(name)
        if task is None:
            raise GenerateError(f"{where}: function {name} has a solution region but no task in course.yml")
        return task.label(name)
    return label_for


def _notebook(assignment: Assignment, text: str, where: str) -> str:
    """The student's notebook: nbgrader's release of the lab notebook, made here (nbgrader_cells)."""
    try:
        nb = nbgrader_cells.student_notebook(json.loads(text), assignment, where)
    except nbgrader_cells.CellError as exc:
        raise GenerateError(str(exc)) from None
    return json.dumps(nb, indent=1, ensure_ascii=False) + "\n"


def render(assignment: Assignment, path: Path, rel: str) -> bytes:
    """The student version of the solution file at ``path`` (``rel`` relative to the folder)."""
    where = f"solutions/{assignment.folder}/{rel}"
    if path.suffix == ".py":
        text = path.read_text(encoding="utf-8")
        if BEGIN not in text and END not in text:
            return text.encode("utf-8")
        labeller = _python_labeller(assignment, path.stem, where)
        return strip_regions(text, where, labeller).encode("utf-8")
    if path.suffix == ".ipynb":
        return _notebook(assignment, path.read_text(encoding="utf-8"), where).encode("utf-8")
    return path.read_bytes()


def release_files(assignment: Assignment, src: Path | None = None) -> dict[str, bytes]:
    """Every file of the student release: relative path -> contents."""
    src = src or assignment.solutions_dir
    files = {}
    for path in sorted(src.rglob("*")):
        rel = path.relative_to(src)
        if path.is_dir() or any(part in SKIP for part in rel.parts) or path.suffix == ".pyc":
            continue
        files[rel.as_posix()] = render(assignment, path, rel.as_posix())
    return files


def write(assignment: Assignment, dst: Path | None = None) -> Path:
    """Regenerate the release into ``dst`` (default assignments/<folder>), replacing what was there."""
    dst = dst or assignment.assignments_dir
    files = release_files(assignment)
    if dst.exists():
        shutil.rmtree(dst)
    for rel, data in files.items():
        target = dst / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
    return dst


def drift(assignment: Assignment, dst: Path | None = None) -> list[str]:
    """Relative paths where the committed release differs from a fresh generation."""
    dst = dst or assignment.assignments_dir
    fresh = release_files(assignment)
    committed = {}
    if dst.exists():
        for path in dst.rglob("*"):
            rel = path.relative_to(dst)
            if path.is_file() and not any(part in SKIP for part in rel.parts) and path.suffix != ".pyc":
                committed[rel.as_posix()] = path.read_bytes()
    return sorted(rel for rel in fresh.keys() | committed.keys() if fresh.get(rel) != committed.get(rel))

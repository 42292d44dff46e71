"""What the course's nbgrader_config.py plugs into `nbgrader autograde` (imported by nbgrader only).

- ``RequireTestCells`` (first sanitizing step): a submitted notebook that lacks the course's test
  cells (a notebook not made from the released one, or with its nbgrader metadata stripped) stops
  that student with one line naming the student and the file, where nbgrader alone would record
  no score and say nothing.
- ``RestoreHiddenTests`` (nbgrader's OverwriteCells): a test cell handed in as released gets its
  hidden tests back before nbgrader compares checksums, so nbgrader's "checksum has changed"
  warning is left for a locked cell a student really edited.
- ``TestCellsOnly`` (nbgrader's Execute, narrowed): only the locked "autograder tests" cells run.
  The lab's cells (the bandwidth sweep, the decode benchmark, the Break It experiments) and the
  student's answer cells are not re-run on the grading machine, and nothing the student wrote runs
  in the grading kernel: each test cell runs `python -m autograder grade` on the submitted folder,
  in the grader's sandbox with its per-call limits, and task 5 grades the student's own
  measurements.json.
- ``pregrade``: grade-all grades submitted/ into <course>/autograder-grades/ before nbgrader starts
  (only new or changed submissions), with a warm sandbox per worker; each notebook's test cells read
  those results instead of starting a grader of their own (about 1.5 s a student instead of 7).
- ``add_missing_notebooks``: a student who handed in the .py files but no notebook gets the released
  notebook in submitted/<student>/<assignment>/, so their .py files are graded instead of skipped.
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from nbconvert.preprocessors import ClearMetadataPreprocessor
from nbgrader.api import Gradebook, MissingEntry
from nbgrader.preprocessors import (
    AssignLatePenalties,
    CheckCellMetadata,
    ClearOutput,
    DeduplicateIds,
    Execute,
    IgnorePattern,
    LimitOutput,
    NbGraderPreprocessor,
    OverwriteCells,
    OverwriteKernelspec,
    SaveAutoGrades,
)

from autograder.core import settings
from autograder.exports.nbgrader_cells import (
    BEGIN_HIDDEN,
    END_HIDDEN,
    ROOT_ENV,
    CellError,
    clear_region,
    is_test_cell,
)
from autograder.exports.nbgrader_course import PREGRADED_DIR, PYTHON_ENV


class MissingTestCells(Exception):
    """A submitted notebook without the course's test cells."""


class RequireTestCells(NbGraderPreprocessor):
    """Refuse a submitted notebook that lacks any of the gradebook's autograder test cells."""

    def preprocess(self, nb, resources):
        info = resources["nbgrader"]
        with Gradebook(info["db_url"]) as gb:
            try:
                source = gb.find_notebook(info["notebook"], info["assignment"])
            except MissingEntry:
                return nb, resources
            wanted = [c.name for c in source.grade_cells if c.cell_type == "code"]
        present = {c.get("metadata", {}).get("nbgrader", {}).get("grade_id") for c in nb.cells}
        missing = [name for name in wanted if name not in present]
        if missing:
            path = Path(resources.get("metadata", {}).get("path", ".")) / f"{info['notebook']}.ipynb"
            what = ("has no nbgrader cell metadata" if len(missing) == len(wanted)
                    else f"lacks the test cells {', '.join(missing)}")
            msg = (f"{info['student']}: {path} {what}, so nbgrader cannot score it; it was not made from the "
                   f"released notebook: put the student's answers into the released {info['notebook']}.ipynb "
                   f"and autograde again")
            self.log.error(msg)
            raise MissingTestCells(msg)
        return nb, resources


class RestoreHiddenTests(OverwriteCells):
    """nbgrader's OverwriteCells, which first puts back the hidden tests of a test cell handed in
    as released. nbgrader keeps a test cell's source with its hidden tests, releases it without
    them, and compares checksums: every released test cell would read as an edited locked cell
    ("Attribute 'checksum' ... has changed!", one warning per cell and student), the warning that
    in nbgrader means a student changed a locked cell. A cell that differs in more than the hidden
    tests still warns."""

    def preprocess_cell(self, cell, resources, cell_index):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id is not None and is_test_cell(cell):
            try:
                source = self.gradebook.find_source_cell(grade_id, self.notebook_id, self.assignment_id)
            except MissingEntry:
                source = None
            if source is not None and source.locked and _released(source.source) == _released(cell.source):
                cell.source = source.source
        return super().preprocess_cell(cell, resources, cell_index)


def _released(source: str) -> str | None:
    """A test cell's source as nbgrader releases it (hidden tests dropped); None when malformed."""
    try:
        return clear_region(source, BEGIN_HIDDEN, END_HIDDEN, None, "cell").rstrip()
    except CellError:
        return None


class TestCellsOnly(Execute):
    """nbgrader's Execute that runs the autograder test cells and skips every other cell."""

    def preprocess_cell(self, cell, resources, index):
        if not is_test_cell(cell):
            return cell, resources
        return super().preprocess_cell(cell, resources, index)


#: Autograde.sanitize_preprocessors: nbgrader 0.9.6's, after RequireTestCells, with RestoreHiddenTests
#: for OverwriteCells.
SANITIZE = [RequireTestCells, ClearOutput, DeduplicateIds, OverwriteKernelspec, RestoreHiddenTests,
            CheckCellMetadata]
#: Autograde.autograde_preprocessors: nbgrader 0.9.6's, with TestCellsOnly for Execute.
AUTOGRADE = [TestCellsOnly, IgnorePattern, ClearMetadataPreprocessor, LimitOutput, SaveAutoGrades,
             AssignLatePenalties, CheckCellMetadata]


def autograding(argv: list[str]) -> bool:
    """Whether this process is `nbgrader autograde` (its first word that is not an option). The
    formgrader's autograde button runs inside the notebook server: no pre-grading, no added
    notebooks there; its test cells grade each student themselves."""
    return next((arg for arg in argv[1:] if not arg.startswith("-")), None) == "autograde"


def add_missing_notebooks(course_dir: Path, assignment: str, notebook: str, modules: list[str]) -> list[Path]:
    """Copy release/<assignment>/<notebook> into each submitted/<student>/<assignment>/ that holds one of
    ``modules`` but no notebook; returns the copies. Prints one line per copy to stderr."""
    course_dir = Path(course_dir)
    released = course_dir / "release" / assignment / notebook
    if not released.is_file():
        return []
    added = []
    for folder in sorted(course_dir.glob(f"submitted/*/{assignment}")):
        target = folder / notebook
        if target.exists() or not any((folder / m).is_file() for m in modules):
            continue
        shutil.copyfile(released, target)
        added.append(target)
        print(f"[autograder] {folder.parent.name}: no {notebook} handed in; grading their .py files with the "
              f"released notebook (copied to {target.relative_to(course_dir)})", file=sys.stderr)
    return added


#: Set once this process has pre-graded (nbgrader may load its config more than once).
_DONE_ENV = settings.PREGRADED.name


def pregrade(course_dir: Path, assignment: str) -> int:
    """Run `python -m autograder grade-all` on the course's submitted/ into PREGRADED_DIR; returns its
    exit status. A failure costs only time: the test cells then grade those students themselves."""
    submitted = Path(course_dir) / "submitted"
    if settings.PREGRADED.get() or not submitted.is_dir():
        return 0
    os.environ[_DONE_ENV] = "1"
    print(f"[autograder] grading {submitted} with grade-all first; the notebooks' test cells read its results",
          file=sys.stderr, flush=True)
    done = subprocess.run([os.environ.get(PYTHON_ENV) or sys.executable, "-m", "autograder", "grade-all",
                           str(submitted), "--assignment", assignment, "--out", str(Path(course_dir) / PREGRADED_DIR)],
                          cwd=os.environ.get(ROOT_ENV), stdin=subprocess.DEVNULL, stdout=sys.stderr)
    if done.returncode != 0:
        print(f"[autograder] grade-all exited {done.returncode}; the test cells grade the students it did not",
              file=sys.stderr, flush=True)
    return done.returncode

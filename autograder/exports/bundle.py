"""The student bundle: one zip with everything a student needs and nothing of the grader's.

Layout of ``<name>-student.zip`` (one top folder, so unzipping never spills files)::

    <name>-student/README.md              the student README, also in assignments/<folder>/
    <name>-student/requirements.txt       what students install (pins taken from requirements.txt)
    <name>-student/pytest.ini             strict markers; plain ``pytest`` runs the public tests
    <name>-student/course.yml             tasks, titles, points: the public tests' markers come from it
    <name>-student/shared/...             the project's shared package (tables, simulated GPU, ...)
    <name>-student/docs/quiz.md           the pages of shared/'s student commands (STUDENT_DOCS)
    <name>-student/assignments/<folder>/  the student release, freshly generated from solutions/

The release part is generated in memory from solutions/ (autograder/exports/generate.py), so a stale
assignments/ tree can never ship; ``drift`` says when the committed tree differs. Nothing is read
from autograder/ and nothing from solutions/ is copied as is. The zip is reproducible: sorted
entries, fixed timestamps and permissions, so the same sources give the same bytes.
"""
from __future__ import annotations

import os
import re
import tempfile
import zipfile
from pathlib import Path

from autograder.core.course import ROOT, Assignment
from autograder.exports import generate

#: What a student installs, by package name; versions and pins come from the project's requirements.txt.
STUDENT_PACKAGES = ("torch", "numpy", "matplotlib", "pyyaml", "pytest", "hypothesis")
#: Folders and files of shared/ that are build or run leftovers, never shipped (nor any dotfile).
SKIP = {"__pycache__", ".pytest_cache", ".ipynb_checkpoints", ".hypothesis"}
#: Pages of docs/ a student is pointed to (the quiz's --help and the student README name docs/quiz.md).
STUDENT_DOCS = ("docs/quiz.md",)
#: Timestamp of every zip entry (the earliest a zip can hold), so the bytes do not depend on when.
ZIP_TIME = (1980, 1, 1, 0, 0, 0)

PYTEST_INI = """\
# The public tests of this assignment. Plain `pytest` runs them all; `pytest -m task1` one task.
# Task markers are registered from course.yml by assignments/{folder}/conftest.py; a marker that
# course.yml does not declare is an error, not a silent no-op.
[pytest]
testpaths = assignments/{folder}
addopts = --strict-markers
"""

REQUIREMENTS_HEAD = """\
# What the {name} lab needs: pip install -r requirements.txt
# torch is pinned to the version the course is graded with; on a machine with an NVIDIA GPU the
# same pin installs PyPI's CUDA build. To open the notebook you also need Jupyter (pip install notebook).
"""


class BundleError(Exception):
    """The bundle cannot be built from these sources."""


def _package_name(line: str) -> str:
    return re.split(r"[\s\[<>=!~;@]", line.strip(), maxsplit=1)[0].lower().replace("_", "-")


def student_requirements(assignment: Assignment, project_requirements: Path) -> str:
    """The students' requirements.txt: STUDENT_PACKAGES, each as the project pins it."""
    lines = [line.strip() for line in project_requirements.read_text(encoding="utf-8").splitlines()]
    pinned = {_package_name(line): line for line in lines if line and not line.startswith("#")}
    if "==" not in pinned.get("torch", ""):
        raise BundleError(f"{project_requirements}: torch is not pinned (torch==X.Y.Z); "
                          "students must get the graded version")
    body = [pinned.get(name, name) for name in STUDENT_PACKAGES]
    return REQUIREMENTS_HEAD.format(name=assignment.name) + "\n".join(body) + "\n"


def _shared_files(shared: Path) -> dict[str, bytes]:
    files = {}
    for path in sorted(shared.rglob("*")):
        rel = path.relative_to(shared.parent)
        hidden = any(part in SKIP or part.startswith(".") for part in rel.parts)
        if path.is_file() and not hidden and path.suffix != ".pyc":
            files[rel.as_posix()] = path.read_bytes()
    return files


def contents(assignment: Assignment, root: Path | None = None) -> dict[str, bytes]:
    """Every file of the bundle: path inside the zip -> bytes. ``root`` holds everything; by
    default the course folder gives solutions/ and course.yml, the checkout shared/ and requirements."""
    top = f"{assignment.name}-student"
    course_root, root = root or assignment.root, root or ROOT
    release = generate.release_files(assignment, course_root / "solutions" / assignment.folder)
    readme = release.get("README.md")
    if readme is None:
        raise BundleError(f"solutions/{assignment.folder}/README.md is missing: the bundle's front page")
    files = {
        "README.md": readme,
        "requirements.txt": student_requirements(assignment, root / "requirements.txt").encode("utf-8"),
        "pytest.ini": PYTEST_INI.format(folder=assignment.folder).encode("utf-8"),
        "course.yml": (course_root / "course.yml").read_bytes(),
    }
    files.update(_shared_files(root / "shared"))
    for page in STUDENT_DOCS:
        if not (root / page).is_file():
            raise BundleError(f"{page} is missing: the student README and the commands' --help point to it")
        files[page] = (root / page).read_bytes()
    files.update({f"assignments/{assignment.folder}/{rel}": data for rel, data in release.items()})
    return {f"{top}/{rel}": files[rel] for rel in sorted(files)}


def write_zip(files: dict[str, bytes], target: Path) -> Path:
    """Write ``files`` to ``target`` reproducibly and atomically (a temp file, then a rename)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", dir=target.parent)
    os.close(fd)
    try:
        with zipfile.ZipFile(tmp, "w", compression=zipfile.ZIP_DEFLATED) as zf:
            for name in sorted(files):
                info = zipfile.ZipInfo(name, date_time=ZIP_TIME)
                info.compress_type = zipfile.ZIP_DEFLATED
                info.external_attr = 0o100644 << 16
                zf.writestr(info, files[name])
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def build(assignment: Assignment, out_dir: Path, root: Path | None = None) -> Path:
    """Write ``out_dir/<name>-student.zip`` and return its path."""
    return write_zip(contents(assignment, root), Path(out_dir) / f"{assignment.name}-student.zip")


def drift(assignment: Assignment) -> list[str]:
    """Files where the committed assignments/ tree differs from the fresh generation the bundle uses."""
    return generate.drift(assignment)

"""Classes for the people-loop tests: a course that gives the Explain It Back answers points, and
students' notebooks made from the real release notebook (assignments/why17/why17.ipynb) with
their answers written in, handed in as folders and zips."""
from __future__ import annotations

import copy
import json
import zipfile
from pathlib import Path

import yaml

from tests.helpers.paths import ROOT

RELEASE = ROOT / "assignments" / "why17" / "why17.ipynb"
STUB = "YOUR ANSWER HERE"


def why17_course(tmp_path: Path, manual: list[dict]) -> Path:
    """A course folder holding the checkout's course.yml with why17 given ``manual`` items (its
    solutions/ and assignments/ are the checkout's)."""
    folder = tmp_path / "course"
    folder.mkdir()
    for name in ("solutions", "assignments"):
        (folder / name).symlink_to(ROOT / name)
    data = yaml.safe_load((ROOT / "course.yml").read_text(encoding="utf-8"))
    data["assignments"]["why17"]["manual"] = manual
    (folder / "course.yml").write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return folder


def answered(answers: dict[int, str], drop_metadata: bool = False) -> dict:
    """The release notebook with answer N (1-based, in the notebook's order) written in; with
    ``drop_metadata`` the answer cells lose their nbgrader metadata (an editor that strips it)."""
    nb = copy.deepcopy(json.loads(RELEASE.read_text(encoding="utf-8")))
    number = 0
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "markdown" and meta.get("grade") and meta.get("solution"):
            number += 1
            source = "".join(cell["source"])
            if number in answers:
                cell["source"] = source.replace(STUB, answers[number])
            if drop_metadata:
                cell["metadata"] = {}
    return nb


def hand_in_folder(root: Path, student: str, nb: dict) -> Path:
    folder = root / student
    folder.mkdir(parents=True)
    (folder / "why17.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    return folder


def hand_in_zip(root: Path, student: str, nb: dict) -> Path:
    """A zip holding the assignment's folder, as a student zips it (one folder deeper)."""
    root.mkdir(parents=True, exist_ok=True)
    path = root / f"{student}.zip"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("why17/why17.ipynb", json.dumps(nb))
    return path


def tiny_asg(name: str = "tiny"):
    from autograder.core import course
    from tests.helpers.tiny_course import TINY
    return course.load(TINY / "course.yml").assignment(name)


def write_out(out: Path, layout, asg, scores: dict[str, float]) -> None:
    """OUT as grade-all leaves it, for ``layout``'s students with ``scores`` (points of the one
    check of the tiny course): results.json, a feedback page and gradebook.csv, each written by
    grade-all's own writers (autograder/reports/)."""
    from autograder.reports import feedback_html, gradebook
    entries = []
    for sub in layout.submissions:
        score = scores[sub.student]
        results = {"score": score, "max_score": 10.0, "output": "", "tests": [
            {"name": "double Double it [doubles_like_reference]", "score": score, "max_score": 10.0,
             "status": "passed" if score == 10 else "failed", "task": "double",
             "check": "doubles_like_reference", "visibility": "visible",
             "output": "" if score == 10 else "double(1.5) returned 2.25, expected 3"}]}
        folder = out / sub.student
        folder.mkdir(parents=True)
        (folder / "results.json").write_text(json.dumps(results))
        (folder / "feedback.html").write_text(feedback_html.render(sub.student, results, asg))
        entries.append((sub, results))
    (out / "gradebook.csv").write_text(gradebook.gradebook_csv(entries, asg))


def gradescope_group(root: Path, files: dict[str, str]) -> Path:
    """A Gradescope export of one group submission (Fay, SID 501, and Gus, SID 502) holding
    ``files``, with the export's own submission_metadata.yml."""
    folder = root / "submission_1"
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    (root / "submission_metadata.yml").write_text(
        "submission_1:\n  :created_at: 2026-11-30 12:00:00.000000000 +00:00\n  :submitters:\n"
        "  - :name: Fay Group\n    :sid: '501'\n    :email: 501@x.edu\n"
        "  - :name: Gus Group\n    :sid: '502'\n    :email: 502@x.edu\n", encoding="utf-8")
    return root

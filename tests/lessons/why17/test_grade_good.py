"""Correct submissions written in other styles keep full marks on every check they reach."""
from __future__ import annotations

import zipfile

import pytest

from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import build

GOOD = sorted(p.name for p in (build.HERE / "good").iterdir() if p.is_dir())


def test_there_are_alternative_styles_for_every_module():
    covered = set().union(*(build.changed_modules("good", name) for name in GOOD))
    assert covered == set(build.MODULES)


@pytest.mark.slow
@pytest.mark.parametrize("name", GOOD)
def test_alternative_style_passes(name, tmp_path):
    folder = build.overlay("good", name, tmp_path / name)
    reachable = build.checks_touching(build.changed_modules("good", name))
    results = grade_submission(folder, device="cpu", only=reachable)
    assert {t["check"] for t in results["tests"]} == reachable
    assert build.failed(results) == set(), build.outputs(results)
    assert results["score"] == results["max_score"] > 0


def test_zip_inside_a_top_folder_is_graded_like_the_folder(tmp_path):
    folder = build.overlay("good", "numpy_predict", tmp_path / "src")
    archive = tmp_path / "student.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        for path in folder.iterdir():
            zf.write(path, f"why17/{path.name}")
        zf.writestr("__MACOSX/._predict.py", "junk")
    only = build.checks_touching({"predict"}) - build.checks_touching({"roofline"})
    results = grade_submission(archive, device="cpu", only=only)
    assert build.failed(results) == set()
    assert "predict.py" in results["output"] and "__MACOSX" not in results["output"]

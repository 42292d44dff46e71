"""The Gradescope package, end to end: build the zip, unpack it under a temporary root laid out as
Gradescope lays out /autograder (source/, submission/, results/, run_autograder), run its
run_autograder with AUTOGRADER_ROOT pointing there and the PYTHON setting at this venv's Python (setup.sh
is Gradescope's job: nothing is pip-installed here), and read results/results.json.
"""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from autograder.core import course, settings
from autograder.exports import gradescope
from autograder.grading import simseed as seed
from tests.exports import gradescope_package
from tests.helpers.paths import ROOT

SUBMISSIONS = ROOT / "autograder" / "lessons" / "why17" / "fixtures"
REFERENCE = ROOT / "solutions" / "why17"
STUBS = ROOT / "assignments" / "why17"
MODULES = ("bw", "flops", "predict", "roofline")


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    return gradescope_package.build(tmp_path_factory.mktemp("package"))


def gradescope_root(package: Path, where: Path, files: dict[str, Path]) -> Path:
    """``where`` laid out as Gradescope's /autograder, with ``files`` (name -> source) submitted."""
    with zipfile.ZipFile(package) as zf:
        zf.extractall(where / "source")
    for name in ("run_autograder", "setup.sh"):
        os.chmod(where / "source" / name, 0o755)          # zipfile does not restore modes
    shutil.copy2(where / "source" / "run_autograder", where / "run_autograder")
    (where / "submission").mkdir()
    (where / "results").mkdir()
    for name, src in files.items():
        shutil.copyfile(src, where / "submission" / name)
    return where


def run_autograder(root: Path, python: str = sys.executable) -> dict:
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), **{settings.PYTHON.name: python})
    env.pop("PYTHONPATH", None)
    env.pop(seed.ENV, None)        # the package grades with the secret it carries
    done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads((root / "results" / "results.json").read_text())


def reference_files() -> dict[str, Path]:
    files = {f"{m}.py": REFERENCE / f"{m}.py" for m in MODULES}
    files["measurements.json"] = SUBMISSIONS / "measurements" / "reference" / "measurements.json"
    return files


# --------------------------------------------------------------------------- the zip itself

def test_package_holds_the_grader_and_nothing_of_the_repository_besides(package):
    with zipfile.ZipFile(package) as zf:
        infos = {i.filename: i for i in zf.infolist()}
    names = set(infos)
    for script in ("setup.sh", "run_autograder"):
        assert script in names and (infos[script].external_attr >> 16) & 0o111, f"{script} not executable"
    assert "course.yml" in names and gradescope.GRADING_REQUIREMENTS in names
    assert "requirements.txt" not in names      # the development tools stay out of the image
    assert any(n.startswith("autograder/lessons/why17/checks/") for n in names)
    assert {f"solutions/why17/{m}.py" for m in MODULES} <= names
    assert "autograder/runtime/runner.py" in names and "autograder/sandbox/jail.py" in names
    for name in names:
        top = name.split("/", 1)[0]
        assert top not in ("tests", ".git", ".venv", "assignments", "out", ".notes"), name
        assert "__pycache__" not in name and not name.endswith(".pyc"), name


def test_the_same_tree_builds_the_same_bytes(package, tmp_path):
    again = gradescope.build(tmp_path / "again.zip")
    assert again.read_bytes() == package.read_bytes()


def test_setup_sh_installs_cpu_torch_at_the_projects_pin(package, tmp_path):
    with zipfile.ZipFile(package) as zf:
        setup = zf.read("setup.sh").decode()
    pins = [line.strip() for line in (ROOT / "requirements.txt").read_text().splitlines()
            if re.match(r"^torch\s*==", line.strip())]
    assert len(pins) == 1
    assert f'--index-url "${{WHY17_TORCH_INDEX:-{gradescope.TORCH_CPU_INDEX}}}" "{pins[0]}"' in setup
    assert '-r "$SOURCE/requirements-grading.txt"' in setup and "requirements.txt" not in setup
    assert 'ROOT="${AUTOGRADER_ROOT:-/autograder}"' in setup
    (tmp_path / "setup.sh").write_text(setup)
    syntax = subprocess.run(["bash", "-n", str(tmp_path / "setup.sh")], capture_output=True, text=True)
    assert syntax.returncode == 0, syntax.stderr


def test_out_that_is_a_folder_is_one_line_exit_2(tmp_path):
    done = subprocess.run([sys.executable, "-m", "autograder", "gradescope", "--out", str(tmp_path)],
                          cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0 and "is a folder" in done.stderr


# --------------------------------------------------------------------------- end to end

@pytest.mark.slow
def test_reference_submission_gets_full_marks(package, tmp_path):
    root = gradescope_root(package, tmp_path, reference_files())
    res = run_autograder(root)
    failed = [t["name"] for t in res["tests"] if t["status"] != "passed"]
    assert failed == []
    assert res["score"] == pytest.approx(res["max_score"]) and res["max_score"] == pytest.approx(
        sum(t.points for t in course.load().assignment("why17").tasks))
    visibility = course.load().assignment("why17").visibility
    assert res["visibility"] == visibility
    assert all(t["visibility"] == visibility for t in res["tests"])
    assert "Sandbox (" in res["output"], "the results must say what protection was in force"
    # the package grades with a secret of its own, which only root can read once it ran
    assert "seeded with the grader's secret (course file)" in res["output"]
    secret = root / "source" / seed.SECRET_FILE
    assert secret.is_file() and (os.geteuid() != 0 or secret.stat().st_mode & 0o077 == 0)


@pytest.mark.slow
def test_stub_submission_gets_zero_and_visibility_follows_course_yml(package, tmp_path):
    files = {f"{m}.py": STUBS / f"{m}.py" for m in MODULES}
    root = gradescope_root(package, tmp_path, files)
    course_file = root / "source" / "course.yml"
    raw = yaml.safe_load(course_file.read_text())
    raw["assignments"]["why17"]["visibility"] = "hidden"          # the instructor changes one line
    course_file.write_text(yaml.safe_dump(raw, sort_keys=False))
    res = run_autograder(root)
    assert res["score"] == 0 and res["tests"]
    assert res["visibility"] == "hidden"
    assert {t["visibility"] for t in res["tests"]} == {"hidden"}


@pytest.mark.slow
def test_malicious_submission_cannot_forge_its_results(package, tmp_path):
    files = {"predict.py": REFERENCE / "predict.py",      # honest work beside the attack
             "bw.py": SUBMISSIONS / "attacks" / "write_results" / "bw.py"}
    root = gradescope_root(package, tmp_path / "attack", files)
    res = run_autograder(root)
    base_files = dict(files, **{"bw.py": SUBMISSIONS / "attacks" / "baseline" / "bw.py"})
    base = run_autograder(gradescope_root(package, tmp_path / "baseline", base_files))
    text = (root / "results" / "results.json").read_text()
    assert "FORGED" not in text and res["score"] <= 100
    assert sorted(p.name for p in (root / "results").iterdir()) == ["results.json"]
    assert res["score"] == pytest.approx(base["score"]), "the attack changed the score"
    assert {t["check"]: t["score"] for t in res["tests"]} == {t["check"]: t["score"] for t in base["tests"]}
    predict = [t for t in res["tests"] if t["task"] == "task3"]
    assert predict and all(t["status"] == "passed" for t in predict), "honest predict.py not graded"


def test_a_grader_that_cannot_run_still_leaves_valid_results(package, tmp_path):
    root = gradescope_root(package, tmp_path, {"predict.py": REFERENCE / "predict.py"})
    res = run_autograder(root, python="/bin/false")
    assert res["score"] == 0 and res["tests"] == []
    assert "could not grade this submission (exit status 1)" in res["output"]


@pytest.mark.slow
def test_a_refused_submission_shows_its_reason_in_the_results(package, tmp_path):
    # A symlink is refused (exit 2, one line on stderr); the student sees that line in results.json.
    root = gradescope_root(package, tmp_path, {"predict.py": REFERENCE / "predict.py"})
    os.symlink("/etc/passwd", root / "submission" / 'bw "copy".py')
    res = run_autograder(root)
    assert res["score"] == 0 and res["tests"] == []
    assert res["output"].startswith("The autograder refused this submission: ")
    assert 'bw "copy".py is a symlink; symlinks are refused' in res["output"]
    assert "exit status" not in res["output"] and "\n" not in res["output"]


@pytest.mark.slow
def test_the_harness_metadata_dates_the_submission_not_the_students_copy(package, tmp_path):
    """With a late policy, run_autograder dates the submission by /autograder/submission_metadata.json
    (Gradescope's harness writes it); the student's own copy in the submission dates nothing."""
    root = gradescope_root(package, tmp_path, {"predict.py": REFERENCE / "predict.py"})
    course_yml = root / "source" / "course.yml"
    data = yaml.safe_load(course_yml.read_text())
    data["assignments"]["why17"]["late"] = {"due": "2026-12-01T23:59:00Z", "policy": "zero_after",
                                            "cutoff": "2026-12-03T23:59:00Z"}
    course_yml.write_text(yaml.safe_dump(data, sort_keys=False))
    (root / "submission_metadata.json").write_text(json.dumps({"created_at": "2026-12-04T10:00:00+00:00"}))
    (root / "submission" / "submission_metadata.json").write_text(json.dumps({"created_at": "2019-01-01T00:00:00Z"}))
    res = run_autograder(root)
    assert res["late"]["time_source"] == "Gradescope submission_metadata.json"
    assert res["late"]["submitted_at"] == "2026-12-04T10:00:00+00:00"
    assert res["late"]["raw_score"] > 0 and res["score"] == 0

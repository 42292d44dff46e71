"""The Gradescope image holds only what grading needs: the package's requirements-grading.txt is
requirements.txt's lines for GRADING_PACKAGES (never drifting from it), the grader's code imports
nothing outside that file's packages and their dependencies, and the package's run_autograder
grades the reference to full marks with a fresh venv built from that file alone (installed
offline, from this machine's uv cache and the local wheels its pip config names)."""
from __future__ import annotations

import ast
import importlib.metadata as metadata
import json
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from autograder.core import settings
from autograder.core.errors import UsageError
from autograder.exports import gradescope
from autograder.grading import simseed as seed
from tests.exports import gradescope_package
from tests.helpers.paths import ROOT

REFERENCE = ROOT / "solutions" / "why17"
MEASUREMENTS = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements" / "reference"
#: Imports of packaged code that grading never reaches, each with where it is allowed and why.
NOT_GRADING = {
    "copydetect": ("autograder/similarity/",),  # the similarity command
    "pytest": ("solutions/why17/conftest.py", "solutions/why17/tests/"),   # the public tests students run
    "nbgrader": ("autograder/exports/nbgrader_hooks.py",),      # the nbgrader course's autograde hooks
    "nbconvert": ("autograder/exports/nbgrader_hooks.py",),
    # the laws' strategies and the maintainer's command that draws their table of cases
    "hypothesis": ("autograder/lessons/why17/strategies.py", "autograder/lessons/why17/draw.py",
                   "solutions/why17/tests/"),
}
#: Student code the package carries as test fixtures; it runs in the sandbox, it is not the grader.
FIXTURES = re.compile(r"^autograder/lessons/[^/]+/fixtures/")


@pytest.fixture(scope="module")
def package(tmp_path_factory) -> Path:
    return gradescope_package.build(tmp_path_factory.mktemp("package"))


def runtime_lines(package: Path) -> list[str]:
    with zipfile.ZipFile(package) as zf:
        text = zf.read(gradescope.GRADING_REQUIREMENTS).decode()
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def project_lines() -> dict[str, str]:
    """requirements.txt: package name -> its line, comment dropped."""
    lines = [x.split("#", 1)[0].strip() for x in (ROOT / "requirements.txt").read_text().splitlines()]
    return {Requirement(x).name.lower(): x for x in lines if x}


def test_runtime_requirements_are_the_projects_own_lines(package):
    lines = runtime_lines(package)
    project = project_lines()
    assert [Requirement(x).name.lower() for x in lines] == list(gradescope.GRADING_PACKAGES)
    for line in lines:
        assert project[Requirement(line).name.lower()] == line     # same pin, character for character
    assert "torch" in [Requirement(x).name for x in lines]
    assert next(x for x in lines if x.startswith("torch")) == project["torch"] and "==" in project["torch"]
    for tool in ("nbgrader", "selenium", "ruff", "pytest-xdist", "copydetect", "pytest"):
        assert tool in project and tool not in {Requirement(x).name.lower() for x in lines}


def test_a_grading_package_missing_from_requirements_txt_is_one_line(tmp_path):
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("torch==2.13.0\nmatplotlib\npyyaml\nhypothesis==6.170.17\n")
    with pytest.raises(UsageError) as caught:
        gradescope.grading_requirements(reqs)
    message = str(caught.value)
    assert "\n" not in message and str(reqs) in message and "numpy" in message


def _third_party_imports(path: Path) -> set[str]:
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return {n for n in names if n not in sys.stdlib_module_names}


def _closure(roots) -> set[str]:
    """The distributions ``roots`` install: themselves and their dependencies (extras left out),
    as this venv's metadata says."""
    seen, todo = set(), [Requirement(x).name.lower() for x in roots]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for spec in metadata.requires(name) or []:
            req = Requirement(spec)
            if req.marker is None or req.marker.evaluate({"extra": ""}):
                todo.append(req.name.lower())
    return {n.replace("_", "-") for n in seen}


@pytest.mark.slow
def test_the_grader_imports_nothing_outside_the_runtime_requirements(package):
    installs = _closure(runtime_lines(package))
    local = {p.parts[0].removesuffix(".py") for p in gradescope.files(ROOT)} | {
        p.stem for p in gradescope.files(ROOT) if p.suffix == ".py"}   # the solutions' own modules too
    owners = metadata.packages_distributions()
    outside = []
    scanned = 0
    for rel in gradescope.files(ROOT):
        if rel.suffix != ".py" or FIXTURES.match(rel.as_posix()):
            continue
        scanned += 1
        for module in _third_party_imports(ROOT / rel) - local:
            dists = {d.lower().replace("_", "-") for d in owners.get(module, [module])}
            allowed = any(rel.as_posix().startswith(where) for d in dists for where in NOT_GRADING.get(d, ()))
            if not (dists & installs) and not allowed:
                outside.append(f"{rel}: {module} ({', '.join(sorted(dists))})")
    assert scanned > 50
    assert outside == []
    assert {"torch", "numpy", "matplotlib", "pyyaml", "sympy"} <= installs
    assert not {"nbgrader", "selenium", "jupyterlab", "copydetect", "pytest", "hypothesis"} & installs


def _local_sources() -> list[str]:
    """uv options for the local package sources this machine's pip config names (find-links
    folders, file:// indexes); nothing that needs a network."""
    done = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
    links, indexes = [], []
    for line in done.stdout.splitlines():
        key, _, value = line.partition("=")
        for item in value.strip("'\"").split():
            if key.endswith("find-links") and item.startswith(("/", "file://")) and item not in links:
                links.append(item)
            elif key.endswith("index-url") and item.startswith("file://") and item not in indexes:
                indexes.append(item)
    options = [x for link in links for x in ("--find-links", link)]
    options += [x for index in indexes for x in ("--extra-index-url", index)]
    return options + ["--index-strategy", "unsafe-best-match"] if options else []


@pytest.mark.slow
def test_run_autograder_grades_the_reference_in_a_venv_of_the_runtime_file_alone(package, tmp_path):
    root = tmp_path / "autograder"
    with zipfile.ZipFile(package) as zf:
        zf.extractall(root / "source")
    for name in ("run_autograder", "setup.sh"):
        os.chmod(root / "source" / name, 0o755)
    shutil.copy2(root / "source" / "run_autograder", root / "run_autograder")
    venv = root / "venv"
    made = subprocess.run([sys.executable, "-m", "uv", "venv", "--quiet", "--python", sys.executable, str(venv)],
                          capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr
    install = subprocess.run(
        [sys.executable, "-m", "uv", "pip", "install", "--offline", "--quiet", "--python", str(venv / "bin" / "python"),
         *_local_sources(), "-r", str(root / "source" / gradescope.GRADING_REQUIREMENTS)],
        capture_output=True, text=True, timeout=900)
    if install.returncode != 0 and "network was disabled" in install.stderr:
        pytest.skip("this machine's caches and local wheels cannot install requirements-grading.txt "
                    "without a network: " + install.stderr.strip().splitlines()[-1])
    assert install.returncode == 0, install.stderr[-2000:]
    listed = subprocess.run([sys.executable, "-m", "uv", "pip", "list", "--python", str(venv / "bin" / "python"),
                             "--format", "json"], capture_output=True, text=True, timeout=120)
    present = {p["name"].lower() for p in json.loads(listed.stdout)}
    assert "torch" in present and not {"nbgrader", "pytest", "copydetect", "selenium", "ruff"} & present
    (root / "submission").mkdir()
    (root / "results").mkdir()
    for module in ("bw", "flops", "predict", "roofline"):
        shutil.copyfile(REFERENCE / f"{module}.py", root / "submission" / f"{module}.py")
    shutil.copyfile(MEASUREMENTS / "measurements.json", root / "submission" / "measurements.json")
    env = dict(os.environ, AUTOGRADER_ROOT=str(root), **{settings.PYTHON.name: str(venv / "bin" / "python")})
    env.pop("PYTHONPATH", None)
    env.pop(seed.ENV, None)
    done = subprocess.run([str(root / "run_autograder")], cwd=root, env=env, capture_output=True,
                          text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]
    res = json.loads((root / "results" / "results.json").read_text())
    assert [t["name"] for t in res["tests"] if t["status"] != "passed"] == [], res["output"][-2000:]
    assert res["tests"] and res["score"] == pytest.approx(res["max_score"])

"""The student bundle (`python -m autograder release why17 --out DIR`): unpacked into a fresh
folder, its public tests run there and fail on the stubs, the simulated GPU runs there, and
nothing from solutions/ or autograder/ is inside, neither by name nor by content.
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

from autograder.core import course
from autograder.exports import bundle, generate
from tests.helpers.public_runs import ROOT, run_pytest

ASSIGNMENT = course.load().assignment("why17")
TOP = "why17-student"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
#: Shorter lines (`else:`, `continue`, `return out`) say nothing about whose code they are.
MIN_SECRET_LINE = 12
MIN_GRADER_LINE = 30
#: Bound for one child process of these tests, in seconds.
CHILD_TIMEOUT_S = 300


def _cli(*args, cwd=ROOT):
    return subprocess.run([sys.executable, "-m", "autograder", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=CHILD_TIMEOUT_S)


@pytest.fixture(scope="module")
def released(tmp_path_factory):
    out = tmp_path_factory.mktemp("release")
    proc = _cli("release", "why17", "--out", str(out))
    assert proc.returncode == 0, proc.stderr
    path = out / "why17-student.zip"
    assert f"wrote {path}" in proc.stdout
    return path


@pytest.fixture(scope="module")
def unpacked(released, tmp_path_factory):
    where = tmp_path_factory.mktemp("student")
    with zipfile.ZipFile(released) as zf:
        for name in zf.namelist():
            assert not name.startswith("/") and ".." not in Path(name).parts, name
        zf.extractall(where)
    assert [p.name for p in where.iterdir()] == [TOP], "one top folder, so unzipping spills nothing"
    return where / TOP


def _names(zip_path) -> list[str]:
    with zipfile.ZipFile(zip_path) as zf:
        return zf.namelist()


def _texts(path_or_bytes: bytes, name: str) -> list[str]:
    """The text of a file; for a notebook, the source of each cell (what a reader would see)."""
    text = path_or_bytes.decode("utf-8", errors="replace")
    if name.endswith(".ipynb"):
        cells = json.loads(text).get("cells", [])
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    return [text]


def _lines(texts) -> set[str]:
    return {line.strip() for text in texts for line in text.splitlines()}


def _split_regions(texts) -> tuple[list[str], list[str]]:
    inside, secret, public = False, [], []
    for text in texts:
        for line in text.splitlines():
            stripped = line.strip()
            if stripped in (BEGIN, END):
                inside = stripped == BEGIN
            else:
                (secret if inside else public).append(stripped)
    return secret, public


def secret_lines(root: Path = ROOT) -> set[str]:
    """Distinctive lines from inside the solution regions of solutions/, which no bundle may hold.

    Lines that also appear outside every region, or in the project's shared/ (shipped to students
    by design), are not secrets.
    """
    secret, public = set(), set()
    for path in (root / "solutions").rglob("*"):
        if path.is_file() and path.suffix in (".py", ".ipynb", ".md") and "__pycache__" not in path.parts:
            inside, outside = _split_regions(_texts(path.read_bytes(), path.name))
            secret |= set(inside)
            public |= set(outside)
    for path in (root / "shared").rglob("*.py"):
        public |= _lines(_texts(path.read_bytes(), path.name))
    return {line for line in secret - public if len(line) >= MIN_SECRET_LINE}


def grader_lines(root: Path = ROOT) -> set[str]:
    """Distinctive lines of the autograder's code (hidden checks, sandbox, grading), by the same rule."""
    public = set()
    for path in list((root / "shared").rglob("*.py")) + list((root / "solutions").rglob("*")):
        if path.is_file() and path.suffix in (".py", ".ipynb", ".md"):
            public |= _lines(_split_regions(_texts(path.read_bytes(), path.name))[1])
    grader = set()
    for path in (root / "autograder").rglob("*.py"):
        if path.name != "bundle.py":   # its pytest.ini and requirements templates ship by design
            grader |= _lines(_texts(path.read_bytes(), path.name))
    return {line for line in grader - public if len(line) >= MIN_GRADER_LINE and not line.startswith("#")}


def leaks(zip_path: Path, secrets: set[str]) -> list[str]:
    """'file: line' for every secret line found in a file of the zip."""
    found = []
    with zipfile.ZipFile(zip_path) as zf:
        for name in zf.namelist():
            for line in sorted(_lines(_texts(zf.read(name), name)) & secrets):
                found.append(f"{name}: {line}")
    return found


def forbidden_names(names) -> list[str]:
    """Paths that name solutions/ or autograder/ code, or build leftovers."""
    bad_parts = {"solutions", "autograder", "__pycache__", ".pytest_cache", ".hypothesis"}
    return [n for n in names if bad_parts & set(Path(n).parts) or n.endswith(".pyc")]


# --- What is inside ----------------------------------------------------------------------------

def test_the_bundle_holds_the_release_shared_course_and_readme(released, unpacked):
    release = generate.release_files(ASSIGNMENT)
    shipped = {p.relative_to(unpacked / "assignments" / "why17").as_posix()
               for p in (unpacked / "assignments" / "why17").rglob("*") if p.is_file()}
    assert shipped == set(release), "assignments/why17 is the whole generated release, nothing else"
    for rel, data in release.items():
        assert (unpacked / "assignments" / "why17" / rel).read_bytes() == data, rel
    assert (unpacked / "README.md").read_bytes() == (ROOT / "solutions" / "why17" / "README.md").read_bytes()
    assert (unpacked / "course.yml").read_bytes() == (ROOT / "course.yml").read_bytes()
    for path in (ROOT / "shared").rglob("*"):
        rel = path.relative_to(ROOT)
        leftover = "__pycache__" in rel.parts or any(p.startswith(".") for p in rel.parts)
        if path.is_file() and not leftover and path.suffix != ".pyc":
            assert (unpacked / rel).read_bytes() == path.read_bytes(), rel


def test_caches_and_dotfiles_of_shared_stay_home(tmp_path):
    project = tmp_path / "project"
    for name in ("shared", "solutions"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("course.yml", "requirements.txt", *bundle.STUDENT_DOCS):
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ROOT / name, project / name)
    (project / "shared" / "__pycache__").mkdir()
    (project / "shared" / "__pycache__" / "tables.cpython-311.pyc").write_bytes(b"\0")
    (project / "shared" / ".tables.py.swp").write_bytes(b"\0")
    (project / "shared" / ".hypothesis" / "examples").mkdir(parents=True)
    (project / "shared" / ".hypothesis" / "examples" / "x").write_bytes(b"\0")
    names = bundle.contents(ASSIGNMENT, root=project)
    assert f"{TOP}/shared/tables.py" in names
    assert not [n for n in names if "__pycache__" in n or "/." in n or n.endswith(".pyc")]


def test_a_missing_student_page_is_refused_by_name(tmp_path):
    project = tmp_path / "project"
    for name in ("shared", "solutions"):
        shutil.copytree(ROOT / name, project / name, ignore=shutil.ignore_patterns("__pycache__"))
    for name in ("course.yml", "requirements.txt"):
        shutil.copy(ROOT / name, project / name)
    with pytest.raises(bundle.BundleError, match="docs/quiz.md is missing"):
        bundle.contents(ASSIGNMENT, root=project)


def test_the_students_requirements_pin_torch_as_the_project_does(unpacked):
    lines = [x for x in (unpacked / "requirements.txt").read_text().splitlines() if x and not x.startswith("#")]
    project = (ROOT / "requirements.txt").read_text().splitlines()
    torch_pin = next(x.strip() for x in project if x.strip().startswith("torch=="))
    assert torch_pin == "torch==2.13.0" and torch_pin in lines
    assert {x.split("=")[0].lower() for x in lines} == {
        "torch", "numpy", "matplotlib", "pyyaml", "pytest", "hypothesis"}


def test_an_unpinned_torch_is_refused(tmp_path):
    reqs = tmp_path / "requirements.txt"
    reqs.write_text("torch>=2\nnumpy\n")
    with pytest.raises(bundle.BundleError, match="torch is not pinned"):
        bundle.student_requirements(ASSIGNMENT, reqs)


def test_nothing_from_solutions_or_autograder_by_name(released):
    assert forbidden_names(_names(released)) == []
    assert all(n.startswith(f"{TOP}/") for n in _names(released))


def test_no_solution_body_is_inside(released):
    secrets = secret_lines()
    assert len(secrets) >= 50, "the solution regions should give many distinctive lines to look for"
    assert leaks(released, secrets) == []


def test_no_autograder_code_is_inside(released):
    secrets = grader_lines()
    assert len(secrets) >= 50
    assert leaks(released, secrets) == []
    grader_files = {p.read_bytes() for p in (ROOT / "autograder").rglob("*.py") if p.stat().st_size > 200}
    with zipfile.ZipFile(released) as zf:
        assert not [n for n in zf.namelist() if zf.read(n) in grader_files]


def test_the_probe_and_its_settings_stay_with_the_grader(released):
    # The rubric ships (students run it); the probe's scales, order and gate do not.
    probe = ROOT / "autograder" / "gpu" / "probe.py"
    hidden = _lines(_texts(probe.read_bytes(), probe.name)) & grader_lines()
    assert any(line.startswith("SCALES = ") for line in hidden)
    assert leaks(released, hidden) == []
    with zipfile.ZipFile(released) as zf:
        assert f"{TOP}/shared/lessons/why17/gpu/rubric.py" in zf.namelist()


def test_the_scans_find_a_planted_leak(released, tmp_path):
    # Prove the scans can fail: one solution line, one grader file, one solutions/ path.
    solution_line = sorted(secret_lines())[0]
    grader_line = sorted(grader_lines())[0]
    planted = tmp_path / "planted.zip"
    with zipfile.ZipFile(released) as src, zipfile.ZipFile(planted, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("/bw.py"):
                data += f"\n    {solution_line}\n# {grader_line}\n".encode()
            dst.writestr(name, data)
        dst.writestr(f"{TOP}/solutions/why17/bw.py", b"")
    assert any(solution_line in x for x in leaks(planted, secret_lines()))
    assert any(grader_line in x for x in leaks(planted, grader_lines() | {f"# {grader_line}"}))
    assert forbidden_names(_names(planted)) == [f"{TOP}/solutions/why17/bw.py"]


def test_the_zip_is_reproducible(released, tmp_path):
    again = bundle.build(ASSIGNMENT, tmp_path)
    assert again.read_bytes() == released.read_bytes()


# --- It works where it lands ---------------------------------------------------------------------

@pytest.mark.slow
def test_public_tests_run_in_the_bundle_and_fail_on_the_stubs(unpacked, tmp_path):
    run = run_pytest(cwd=unpacked, scratch=tmp_path)   # plain `pytest`: pytest.ini points at the tests
    assert run.returncode == 1, run.output[-3000:]
    assert run.items and run.outcomes() <= {"failed", "error"}
    task_ids = {t.id for t in ASSIGNMENT.tasks}
    for nodeid, item in run.items.items():
        task = next(m for m in item["marks"] if m in task_ids)
        assert f"NotImplementedError: {task}." in item["message"], f"{nodeid}: {item['message']}"


@pytest.mark.slow
def test_one_task_runs_alone_in_the_bundle(unpacked, tmp_path):
    tests = unpacked / "assignments" / "why17" / "tests"
    run = run_pytest(str(tests / "test_predict.py"), str(tests / "test_roofline.py"), "-m", "task3",
                     "--collect-only", cwd=unpacked, scratch=tmp_path)
    assert run.items and all("/test_predict.py::" in n for n in run.items)
    assert "deselected" in run.output


@pytest.mark.slow
def test_the_bundles_markers_are_strict(unpacked, tmp_path):
    extra = unpacked / "assignments" / "why17" / "tests" / "test_typo.py"
    extra.write_text("import pytest\n\n@pytest.mark.tsak1\ndef test_typo():\n    pass\n")
    try:
        run = run_pytest("assignments/why17/tests/test_typo.py", cwd=unpacked, scratch=tmp_path)
    finally:
        extra.unlink()
    assert run.returncode != 0 and "'tsak1' not found in `markers`" in run.output


@pytest.mark.slow
def test_the_bundle_imports_its_own_shared_and_needs_no_grader(unpacked):
    # Every shared module imports from the bundle alone: no autograder/, no solutions/ needed. (Whether
    # they could be found is not the question: an editable install of the project makes them findable.)
    code = ("import importlib, pkgutil, sys, shared\n"
            "assert shared.__file__.startswith(%r), shared.__file__\n"
            "names = [m.name for m in pkgutil.walk_packages(shared.__path__, 'shared.')"
            " if not m.name.endswith('__main__')]\n"
            "mods = [importlib.import_module(n) for n in names]\n"
            "assert all(m.__file__.startswith(%r) for m in mods), [m.__file__ for m in mods]\n"
            "grader = sorted(m for m in sys.modules if m.split('.')[0] in ('autograder', 'solutions'))\n"
            "assert not grader, grader\n"
            "print(len(names))\n") % (str(unpacked), str(unpacked))
    proc = subprocess.run([sys.executable, "-c", code], cwd=unpacked, capture_output=True, text=True,
                          timeout=CHILD_TIMEOUT_S, env={**os.environ, "PYTHONPATH": ""})
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert int(proc.stdout.split()[-1]) >= 5


def _simgpu(unpacked, *paths):
    return subprocess.run([sys.executable, "-m", "shared.simgpu", "--device", "h100", *paths],
                          cwd=unpacked, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S,
                          env={**os.environ, "PYTHONPATH": "", "CUDA_VISIBLE_DEVICES": ""})


@pytest.mark.slow
def test_the_simulated_gpu_runs_in_the_bundle_on_the_stubs(unpacked):
    proc = _simgpu(unpacked, "assignments/why17/bw.py")
    assert proc.returncode == 1, proc.stderr[-3000:]   # failed verdicts: an honest exit status
    assert "FAIL sync_present" in proc.stdout and "NotImplementedError: task1.1: copy_bandwidth" in proc.stdout


@pytest.mark.slow
def test_the_simulated_gpu_passes_finished_work_in_the_bundle(unpacked, tmp_path):
    # A student who finished task1 and task2: the reference's bw.py and flops.py in their place.
    work = unpacked.parent / "finished"
    shutil.copytree(unpacked, work)
    for name in ("bw.py", "flops.py"):
        shutil.copy(ROOT / "solutions" / "why17" / name, work / "assignments" / "why17" / name)
    proc = _simgpu(work, "assignments/why17/bw.py", "assignments/why17/flops.py")
    assert proc.returncode == 0, proc.stderr[-3000:]
    for check in ("sync_present", "bytes_counted_twice", "buffer_exceeds_cache", "warmup_present",
                  "flops_counted_2n3", "units_gb_per_s"):
        assert f"pass {check}" in proc.stdout, proc.stdout[-3000:]


# --- The command line -----------------------------------------------------------------------------

def test_an_unknown_assignment_is_one_line_and_exit_2(tmp_path):
    proc = _cli("release", "nosuch", "--out", str(tmp_path))
    assert proc.returncode == 2
    assert proc.stderr.strip().count("\n") == 0 and "unknown assignment 'nosuch'" in proc.stderr
    assert not list(tmp_path.iterdir())


def test_out_that_is_a_file_is_one_line_and_exit_2(tmp_path):
    target = tmp_path / "a-file"
    target.write_text("")
    proc = _cli("release", "why17", "--out", str(target))
    assert proc.returncode == 2
    assert "is not a folder" in proc.stderr and "Traceback" not in proc.stderr


# --- Every file the student materials name is in the bundle --------------------------------------

#: The course repository's top folders: a path starting in one names a file the student may look for.
REPO_FOLDERS = ("assignments", "autograder", "bench", "docs", "shared", "solutions", "tests")
#: A path ending so names a file, whatever folder it starts in.
FILE_ENDINGS = (".py", ".md", ".yml", ".yaml", ".json", ".ipynb", ".txt", ".ini", ".csv")
#: Files the student's own run writes, named before they exist.
WRITTEN_BY_THE_STUDENT = {"assignments/why17/measurements.json"}
PATH = re.compile(r"(?<![\w/.:-])((?:[\w.-]+/)+[\w.*-]*[\w*])")


def _student_texts(unpacked: Path) -> dict[str, str]:
    """What a student reads: the bundle's pages and settings (README, docs/quiz.md, course.yml, ...),
    the notebook's cells, the public tests, and the --help of each command the README names."""
    texts = {}
    for path in sorted(unpacked.rglob("*")):
        rel = path.relative_to(unpacked)
        reads = path.suffix in (".md", ".yml", ".ini", ".txt") and rel.parts[:2] != ("shared", "data")
        if path.is_file() and (reads or (rel.parts[0] == "assignments" and path.suffix == ".py")):
            texts[str(rel)] = path.read_text(encoding="utf-8")
    notebook = json.loads((unpacked / "assignments/why17/why17.ipynb").read_text(encoding="utf-8"))
    texts["why17.ipynb"] = "\n".join("".join(c["source"]) for c in notebook["cells"])
    for module in ("shared.quiz", "shared.submit", "shared.simgpu", "shared.decode_bench"):
        run = subprocess.run([sys.executable, "-m", module, "--help"], cwd=unpacked, capture_output=True,
                             text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(unpacked)})
        assert run.returncode == 0, run.stderr
        texts[f"{module} --help"] = run.stdout
    return texts


def named_paths(text: str) -> set[str]:
    """The paths ``text`` names: a/b/c whose first folder is the repository's or whose name ends as a file's."""
    return {p for p in PATH.findall(text) if p.split("/")[0] in REPO_FOLDERS or p.endswith(FILE_ENDINGS)}


def missing_paths(texts: dict[str, str], unpacked: Path) -> list[str]:
    """"where: path" for each path ``texts`` name that is in neither the bundle's top folder nor the
    assignment's (where the notebook runs); a glob counts when it matches."""
    missing = []
    for where, text in texts.items():
        for path in sorted(named_paths(text) - WRITTEN_BY_THE_STUDENT):
            if not any(list(base.glob(path)) for base in (unpacked, unpacked / "assignments/why17")):
                missing.append(f"{where}: {path}")
    return missing


def test_every_file_the_readme_notebook_and_help_name_is_shipped(unpacked):
    assert missing_paths(_student_texts(unpacked), unpacked) == []
    assert (unpacked / "docs" / "quiz.md").read_bytes() == (ROOT / "docs" / "quiz.md").read_bytes()


def test_the_reference_scan_finds_repository_paths_that_are_not_shipped(unpacked):
    # Prove the scan can fail: the kinds of reference the student zip once held.
    texts = {"README.md": "(`python bench/cpu_spread.py` in the course repository) at 3 GB/s or tok/s",
             "course.yml": "# Parsed (autograder/core/course.py); docs/semester.md; shared/data/*.yml"}
    assert missing_paths(texts, unpacked) == ["README.md: bench/cpu_spread.py",
                                              "course.yml: autograder/core/course.py", "course.yml: docs/semester.md"]

"""Build graded folders for the grader's own tests: the reference with one file swapped.

Each folder under wrong/, good/ and hostile/ holds only the file(s) that differ from the
reference solution (solutions/why17); ``overlay`` lays them over a copy of the reference, so
every other check must still pass. ``checks_touching`` picks the checks a file change can reach.
"""
from __future__ import annotations

import shutil
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
REFERENCE = ROOT / "solutions" / "why17"
MODULES = ("bw", "flops", "predict", "roofline")
#: Modules whose checks also run a module's code: roofline.py imports predict.py.
IMPORTERS = {"predict": {"roofline"}}
#: The check modules this grader core owns (the GPU and Measure-table checks are tested elsewhere).
MINE = ("predict_", "bw_cpu", "flops_cpu", "roofline_")


def overlay(kind: str, name: str, dest: Path) -> Path:
    """A folder: the reference's four modules, with tests/submissions/<kind>/<name>/* on top."""
    dest.mkdir(parents=True, exist_ok=True)
    for module in MODULES:
        shutil.copyfile(REFERENCE / f"{module}.py", dest / f"{module}.py")
    for path in (HERE / kind / name).iterdir():
        if path.is_file() and path.suffix == ".py":
            shutil.copyfile(path, dest / path.name)
    return dest


def changed_modules(kind: str, name: str) -> set[str]:
    return {p.stem for p in (HERE / kind / name).glob("*.py")}


def my_checks():
    """The registered checks from this grader core's own check modules, by id."""
    from autograder.grade import load_checks

    return {cid: c for cid, c in load_checks().items() if c.fn.__module__.rsplit(".", 1)[-1].startswith(MINE)}


def checks_touching(modules: set[str]) -> set[str]:
    """Ids of my checks that need any of ``modules`` (or a module importing one of them)."""
    reach = set(modules)
    for m in modules:
        reach |= IMPORTERS.get(m, set())
    return {cid for cid, c in my_checks().items() if reach & set(c.files)}


def failed(results: dict) -> set[str]:
    return {t["check"] for t in results["tests"] if t["status"] == "failed"}


def outputs(results: dict) -> dict[str, str]:
    return {t["check"]: t["output"] for t in results["tests"]}

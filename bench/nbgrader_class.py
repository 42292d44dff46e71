"""`nbgrader autograde` of a class, with the real nbgrader and its SQLite gradebook: wall and CPU
seconds for the whole class and per student, then one correct and one hanging student each on their
own (`--student`, graded afresh), so the hang's extra cost shows: first as configured (grade-all
grades first), then with the pre-grading off (each notebook's first test cell runs `grade` itself).
Figures only; nothing here asserts a time.

    .venv/bin/python bench/nbgrader_class.py [-n 10] [--keep DIR]

The class: ``n`` students with the reference's modules, the reference Measure table and the student
zip's notebook, plus one whose predict.py never returns (fixtures/hostile/endless_loop). CPU seconds
are user + system of nbgrader and everything it started and reaped; the load average is printed
beside them (other work on the machine slows the wall clock, not the CPU).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import settings  # noqa: E402
from autograder.exports.nbgrader_course import PREGRADED_DIR  # noqa: E402
from autograder.lessons.why17.fixtures.build import overlay  # noqa: E402

ASSIGNMENT = "why17"
MODULES = ("bw", "flops", "predict", "roofline")
TABLE = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "measurements" / "reference" / "measurements.json"


def run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> tuple[float, float]:
    """(wall s, CPU s of the command and its reaped children); exits on a failure."""
    env = dict(os.environ, **(env or {}),
               PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    done = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(args)} exited {done.returncode}: {done.stderr.strip().splitlines()[-1:]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def hand_in(course_dir: Path, student: str, hang: bool) -> None:
    folder = course_dir / "submitted" / student / ASSIGNMENT
    shutil.copytree(course_dir / "release" / ASSIGNMENT, folder)
    shutil.copy(ROOT / "assignments" / ASSIGNMENT / "why17.ipynb", folder / "why17.ipynb")
    if hang:
        overlay("hostile", "endless_loop", folder)
    else:
        for module in MODULES:
            shutil.copy(ROOT / "solutions" / ASSIGNMENT / f"{module}.py", folder / f"{module}.py")
    shutil.copy(TABLE, folder / "measurements.json")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=10, help="correct students in the class (default 10)")
    parser.add_argument("--keep", type=Path, default=None, help="build the course here and keep it")
    args = parser.parse_args(argv)
    tmp = None if args.keep else tempfile.TemporaryDirectory(prefix="nbgrader-class-")
    course_dir = (args.keep or Path(tmp.name)).resolve()
    run("-m", "autograder", "nbgrader-course", "--out", str(course_dir), cwd=ROOT)
    run("-m", "nbgrader", "generate_assignment", ASSIGNMENT, cwd=course_dir)
    students = [f"s{i:02d}" for i in range(args.n)]
    for student in students:
        hand_in(course_dir, student, hang=False)
    hand_in(course_dir, "hang", hang=True)
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.1f} before")
    wall, cpu = run("-m", "nbgrader", "autograde", ASSIGNMENT, cwd=course_dir)
    total = len(students) + 1
    print(f"nbgrader autograde {ASSIGNMENT}, {total} students (1 hanging): {wall:.1f} s wall, {cpu:.1f} s CPU; "
          f"{wall / total:.1f} s wall, {cpu / total:.1f} s CPU per student")
    for pregrade in (True, False):
        for student in (students[0], "hang"):
            shutil.rmtree(course_dir / PREGRADED_DIR / student)       # graded afresh, by grade-all or the cell
            wall, cpu = run("-m", "nbgrader", "autograde", ASSIGNMENT, "--student", student, "--force",
                            cwd=course_dir, env={} if pregrade else {settings.PREGRADED.name: "1"})
            how = "grade-all first" if pregrade else f"{settings.PREGRADED.name}=1, the cell runs grade"
            print(f"nbgrader autograde {ASSIGNMENT} --student {student} --force ({how}): "
                  f"{wall:.1f} s wall, {cpu:.1f} s CPU")
    print(f"load average {os.getloadavg()[0]:.1f} after")
    return 0


if __name__ == "__main__":
    sys.exit(main())

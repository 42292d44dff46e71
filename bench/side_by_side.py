"""Side by side, in one run: `python -m autograder grade` of the reference, the stubs and a hostile
submission, and nbgrader's autograde of a comparable one-student notebook course built from the
lesson's functions. Prints wall and CPU seconds of each, the ratio to nbgrader, and the ratios (wall
and CPU) to a bare ``python -c 'import torch'`` (the floor any grader that runs torch code pays). Figures only;
nothing here asserts a time (the grader's tests never time anything).

    .venv/bin/python bench/side_by_side.py [--rounds 3] [--before DIR ...] [--hostile endless_loop] [--keep DIR]

Each round runs everything once, in a fixed order; the table shows each run's median over the
rounds and every round's wall seconds (this machine's speed drifts by tens of percent from minute
to minute, so one round alone says little). ``--before DIR`` adds, in every round, the grade of
the reference by another checkout of the project (a git worktree at an earlier commit), so a
change is measured before and after in one run; repeat it to compare several checkouts (e.g. one
with a speed trick taken out each). Each such checkout's CPU seconds are also printed as a
difference from this checkout's in the same round, and the median of those differences: the
machine's load drifts between rounds more than within one.

The nbgrader course: one notebook whose answer cells hold the reference's predict_decode,
kv_bytes_per_token and copy_bandwidth (their ``### BEGIN SOLUTION`` regions become nbgrader
solution regions), imports torch, and three autograded test cells, one per function; one student
hands in the filled notebook; ``nbgrader autograde`` grades it (its own start, a kernel, the three
cells). CPU seconds are user + system of each command and everything it started and reaped; the
machine's load average is printed beside them (other work slows the wall clock, not the CPU).
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from autograder.core import settings  # noqa: E402

SOLUTIONS = ROOT / "solutions" / "why17"
COURSE_ID = "why17-bench"
LAB = "lab"
#: The reference functions the notebook is built from: (file, function names).
FUNCTIONS = (("predict.py", ("predict_decode", "kv_bytes_per_token")), ("bw.py", ("copy_bandwidth",)))
#: The notebook's three autograded tests, one point each.
TESTS = (
    "assert abs(predict_decode(8e9, 2, 3350) - 3350e9 / 16e9) < 1e-9",
    "assert kv_bytes_per_token(32, 8, 128, 2) == 2 * 32 * 8 * 128 * 2",
    "gbs = copy_bandwidth(2**20, iters=5, device='cpu')\nassert isinstance(gbs, float) and gbs > 0",
)


def _functions_source() -> list[str]:
    """The reference's functions (with their solution regions), one cell's source each; the
    constant copy_bandwidth uses goes with it."""
    parts = []
    for file, names in FUNCTIONS:
        text = (SOLUTIONS / file).read_text()
        tree = ast.parse(text)
        constants = [ast.get_source_segment(text, node) for node in tree.body
                     if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "WARMUP_ITERS"
                                                             for t in node.targets)]
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name in names:
                head = "\n".join(constants) + "\n\n\n" if node.name == "copy_bandwidth" else ""
                lines = text.splitlines()
                end = node.end_lineno      # the body's last statement; the END SOLUTION comment follows
                while end < len(lines) and lines[end].strip().startswith("#"):
                    end += 1
                parts.append(head + "\n".join(lines[node.lineno - 1:end]) + "\n")
    return parts


def _cell(kind: str, source: str, **nbgrader) -> dict:
    cell = {"cell_type": kind, "metadata": {}, "source": source}
    if kind == "code":
        cell.update(execution_count=None, outputs=[])
    if nbgrader:
        cell["metadata"]["nbgrader"] = {"schema_version": 3, "locked": False, "solution": False,
                                        "grade": False, "task": False, **nbgrader}
    return cell


def notebook() -> dict:
    """The source notebook: a preamble, the answer cell, three graded test cells."""
    preamble = (f"import os, sys, time\nsys.path.insert(0, os.environ[{settings.ROOT.name!r}])\n"
                "import torch\nfrom shared import devices, validate\n")
    cells = [_cell("markdown", "# Why ~17 tokens per second? (three functions)"),
             _cell("code", preamble, grade_id="preamble", locked=True),
             *(_cell("code", source, grade_id=f"answer{i}", solution=True)
               for i, source in enumerate(_functions_source(), 1))]
    for i, test in enumerate(TESTS, 1):
        cells.append(_cell("code", test, grade_id=f"test{i}", grade=True, locked=True, points=1))
    return {"cells": cells, "metadata": {"kernelspec": {"name": "python3", "display_name": "Python 3",
                                                          "language": "python"}},
            "nbformat": 4, "nbformat_minor": 5}


def write_course(folder: Path) -> None:
    (folder / "source" / LAB).mkdir(parents=True)
    (folder / "nbgrader_config.py").write_text(
        "import os\n"
        f"os.environ.setdefault({settings.ROOT.name!r}, {str(ROOT)!r})\n"
        "c = get_config()  # noqa: F821\n"
        f"c.CourseDirectory.course_id = {COURSE_ID!r}\n"
        "c.Execute.timeout = 600\n")
    (folder / "source" / LAB / f"{LAB}.ipynb").write_text(json.dumps(notebook(), indent=1))


def _env(**more: str) -> dict:
    # nbgrader runs `alembic` from PATH: this interpreter's bin folder first, as an activated venv would.
    return dict(os.environ, PATH=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
                **more)


def timed(argv: list[str], cwd: Path, **env: str) -> tuple[float, float, subprocess.CompletedProcess]:
    """(wall s, CPU s of the command and all it reaped, the completed process); ``env`` added to its environment."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    done = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=_env(**env))
    wall = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[1:4])} exited {done.returncode}:\n{done.stderr[-3000:]}")
    return wall, cpu, done


def nbgrader_run(work: Path) -> tuple[float, float, str]:
    """Build the course, hand in one filled notebook, time `nbgrader autograde`."""
    course_dir = work / "nbgrader"
    write_course(course_dir)
    timed([sys.executable, "-m", "nbgrader", "generate_assignment", LAB], course_dir)
    student = course_dir / "submitted" / "student1" / LAB
    student.mkdir(parents=True)
    shutil.copy(course_dir / "source" / LAB / f"{LAB}.ipynb", student / f"{LAB}.ipynb")
    wall, cpu, _ = timed([sys.executable, "-m", "nbgrader", "autograde", LAB], course_dir)
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{course_dir / 'gradebook.db'}") as gb:
        sub = gb.find_submission(LAB, "student1")
        score = f"{sub.score:g}/{sub.max_score:g}, {len(TESTS)} checks"
    return wall, cpu, score


def grade_run(folder: Path, work: Path, label: str, tree: Path = ROOT, secret: str = "") -> tuple[float, float, str]:
    """`python -m autograder grade` of ``folder``, run from the checkout ``tree`` (its own code), under
    the simulated GPU's ``secret`` (the sizes asked and the rounds of unjudged calls are drawn from it)."""
    out = work / f"{label}.json"
    wall, cpu, _ = timed([sys.executable, "-m", "autograder", "grade", str(folder), "--out", str(out)], tree,
                         **{settings.SIM_SECRET.name: secret})
    res = json.loads(out.read_text())
    return wall, cpu, f"{res['score']:g}/{res['max_score']:g}, {len(res['tests'])} checks"


def hostile_folder(name: str, work: Path) -> Path:
    from autograder.lessons.why17.fixtures import build
    return build.overlay("hostile", name, work / "hostile" / name)


def one_round(work: Path, hostile: Path | None, befores: list[Path]) -> list[tuple[str, float, float, str]]:
    """Every run once, in a fixed order: (label, wall s, CPU s, result) each. Every grade of the round
    runs under one secret, named after the round: each checkout would otherwise read its own
    ``.why17-sim-secret`` and draw another number of calls (4 to 9 rounds of unjudged ones)."""
    work.mkdir(parents=True)
    rows = [("nbgrader autograde, 1 student", *nbgrader_run(work))]
    wall, cpu, _ = timed([sys.executable, "-c", "import torch"], ROOT)
    rows.append(("bare python -c 'import torch'", wall, cpu, "-"))
    runs = [("grade: reference", SOLUTIONS, ROOT)]
    runs += [(f"grade: reference, {_commit(before)}", SOLUTIONS, before) for before in befores]
    if hostile is not None:
        runs += [("grade: stubs", ROOT / "assignments" / "why17", ROOT),
                 (f"grade: hostile/{hostile.name}", hostile, ROOT)]
    for i, (label, folder, tree) in enumerate(runs):
        rows.append((label, *grade_run(folder, work, f"run{i}", tree, f"side-by-side {work.name}")))
    return rows


def _commit(tree: Path) -> str:
    """The short commit of checkout ``tree`` (its label in the table), and its folder's name when it
    has uncommitted changes (several checkouts of one commit, each with something taken out)."""
    done = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(tree), "status", "--porcelain", "--untracked-files=no"],
                           capture_output=True, text=True).stdout.strip()
    return f"at {done.stdout.strip() or tree}" + (f" {tree.name}" if dirty else "")


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--hostile", default="endless_loop", help="hostile fixture (default endless_loop)")
    p.add_argument("--rounds", type=int, default=3,
                   help="run everything this many times, interleaved; each figure is the median (default 3)")
    p.add_argument("--before", type=Path, action="append", default=[],
                   help="another checkout (e.g. a git worktree of an earlier commit): its grade of the "
                        "reference runs in every round too (repeatable)")
    p.add_argument("--keep", type=Path, default=None, help="work in this folder and keep it")
    p.add_argument("--reference-only", action="store_true",
                   help="grade the reference only (no stubs, no hostile submission): more rounds in the same time")
    args = p.parse_args(argv)
    if args.rounds < 1:
        p.error(f"--rounds must be at least 1, got {args.rounds}")
    for before in args.before:
        if not (before / "autograder" / "__main__.py").is_file():
            p.error(f"--before {before}: not a checkout of this project (no autograder/__main__.py)")
    work = args.keep or Path(tempfile.mkdtemp(prefix="why17-side-"))
    work.mkdir(parents=True, exist_ok=True)
    load0 = os.getloadavg()
    hostile = None if args.reference_only else hostile_folder(args.hostile, work)
    rounds = [one_round(work / f"round{i}", hostile, args.before) for i in range(args.rounds)]
    load1 = os.getloadavg()
    rows = [(label, statistics.median(r[i][1] for r in rounds), statistics.median(r[i][2] for r in rounds),
             [r[i][1] for r in rounds], result) for i, (label, _w, _c, result) in enumerate(rounds[0])]
    nb_wall, nb_cpu, torch_wall, torch_cpu = rows[0][1], rows[0][2], rows[1][1], rows[1][2]
    print(f"machine: {os.cpu_count()} CPUs; load average (1, 5, 15 min) before "
          f"{', '.join(f'{x:.1f}' for x in load0)}, after {', '.join(f'{x:.1f}' for x in load1)}")
    print(f"{args.rounds} round(s), interleaved; wall and CPU are medians, ratios are of the medians")
    print(f"{'run':<44} {'wall s':>7} {'CPU s':>7} {'wall/nbgrader':>14} {'CPU/nbgrader':>13} "
          f"{'wall/torch':>11} {'CPU/torch':>10}  {'walls, by round':<24} result")
    for label, wall, cpu, walls, result in rows:
        spread = " ".join(f"{w:.2f}" for w in walls)
        print(f"{label:<44} {wall:>7.2f} {cpu:>7.2f} {wall / nb_wall:>14.2f} {cpu / nb_cpu:>13.2f} "
              f"{wall / torch_wall:>11.2f} {cpu / torch_cpu:>10.2f}  {spread:<24} {result}")
    for i in range(3, 3 + len(args.before)):   # rows 0-2: nbgrader, torch, this checkout's reference
        paired = [r[2][2] - r[i][2] for r in rounds]
        print(f"{rounds[0][i][0]}: this checkout's CPU s minus its, round by round: "
              f"{' '.join(f'{d:+.2f}' for d in paired)}; median {statistics.median(paired):+.2f}")
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""``python -m shared.submit [FOLDER]``: check the lab folder, run the public tests, write the zip.

Prints, per task, the files that will be graded and those that are missing, and how the task's
public tests went. Exit status: 0 when the zip was written (failing public tests are reported, not
refused: any subset of the work may be handed in); 1 when a graded file is missing or unreadable and
``--allow-missing`` was not given, or a data file records a run on the simulated GPU and
``--allow-simulated`` was not given (one line on stderr says which; no zip is written); 2 on a bad
argument or a folder that is not a lab folder.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from shared import settings
from shared.submit import archive, plan, public

PROG = "python -m shared.submit"


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # one line, exit 2, without the usage block
        print(f"{PROG}: error: {message}", file=sys.stderr)
        raise SystemExit(2)


def parser() -> argparse.ArgumentParser:
    p = _Parser(prog=PROG, description="Check a lab folder against course.yml (every graded file present), "
                                       "run its public tests, and write the zip to hand in.")
    p.add_argument("folder", nargs="?", default=None,
                   help="the lab folder (default: this folder when it is one, else assignments/<folder> "
                        "beside the nearest course.yml)")
    p.add_argument("--out", default=None,
                   help="where to write the zip (default: <assignment>-submission.zip in the top folder, "
                        "the one holding course.yml)")
    p.add_argument("--allow-missing", action="store_true",
                   help="write the zip even when a graded file is missing or unreadable (it costs that task's points)")
    p.add_argument("--allow-simulated", action="store_true",
                   help="write the zip even when measurements.json is from the simulated GPU (its checks of "
                        "your numbers fail: they grade a run on your own CPU or GPU)")
    p.add_argument("--no-tests", action="store_true", help="do not run the public tests")
    return p


def _shown(path: Path) -> str:
    """``path`` relative to the current folder when it lies below it."""
    try:
        return os.path.relpath(path) if path.resolve().is_relative_to(Path.cwd().resolve()) else str(path)
    except ValueError:
        return str(path)


def _tests_line(counts: public.TaskTests, unloaded: bool) -> list[str]:
    """How a task's public tests went; ``unloaded``: some test file could not be loaded."""
    total = counts.passed + counts.failed + counts.skipped
    if not total:
        return ["public tests: none ran (a test file could not be loaded, see below)" if unloaded
                else "public tests: none for this task"]
    parts = [f"{counts.passed} passed"] + ([f"{counts.failed} failed"] if counts.failed else []) \
        + ([f"{counts.skipped} skipped"] if counts.skipped else [])
    lines = [f"public tests: {', '.join(parts)}"]
    lines += [f"  - {message}" for message in counts.failures[:3]]
    if len(counts.failures) > 3:
        lines.append(f"  - ... and {len(counts.failures) - 3} more kinds of failure (run pytest to see them)")
    return lines


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    try:
        folder = Path(args.folder) if args.folder else plan.default_folder(Path.cwd().resolve())
        the_plan = plan.load(folder)
    except plan.PlanError as exc:
        print(f"{PROG}: error: {exc}", file=sys.stderr)
        return 2
    missing, unreadable = the_plan.missing(), the_plan.unreadable()
    print(f"{the_plan.assignment}: {_shown(the_plan.folder)} (what is graded: {_shown(the_plan.course)})")
    outcome = _public_tests(the_plan, args.no_tests)
    for task in the_plan.tasks:
        _print_task(task, missing, unreadable, outcome)
    print()
    _print_warnings(the_plan, outcome)
    if not _may_hand_in(the_plan, missing, unreadable, args.allow_missing):
        return 1
    if not _own_run(the_plan, args.allow_simulated):
        return 1
    _write_zip(the_plan, missing, outcome, args.out)
    return 0


def _public_tests(the_plan: plan.Plan, skip: bool) -> public.Outcome | None:
    """The public tests' outcome (public.run), or None when ``skip`` (--no-tests)."""
    if skip:
        print("public tests: not run (--no-tests)")
        return None
    print("running the public tests ...", flush=True)
    return public.run(the_plan.folder, [t.id for t in the_plan.tasks])


def _print_task(task: plan.TaskFiles, missing: tuple[str, ...], unreadable: dict[str, str],
                outcome: public.Outcome | None) -> None:
    """One task's block: its points, the files graded, those missing or unreadable, its public tests."""
    print(f"\n{task.id}  {task.points:g} points  {task.title}")
    here = [n for n in task.files if n not in missing and n not in unreadable]
    print(f"  graded: {', '.join(here) if here else 'nothing (no file of this task is here)'}")
    for name in task.files:
        if name in missing:
            print(f"  MISSING: {name} (every check that needs it fails)")
        elif name in unreadable:
            print(f"  UNREADABLE: {name} ({unreadable[name]})")
    if outcome is not None:
        unloaded = bool(outcome.uncollected) and any(n.endswith(".py") for n in task.files)
        for line in _tests_line(outcome.tasks[task.id], unloaded):
            print(f"  {line}")


def _print_warnings(the_plan: plan.Plan, outcome: public.Outcome | None) -> None:
    """Public tests that did not run or load, and data files older than the code they come from."""
    if outcome is not None and outcome.problem:
        print(f"warning: the public tests did not run: {outcome.problem}")
    for where, why in (outcome.uncollected.items() if outcome is not None else ()):
        print(f"warning: the public tests in {where} could not be loaded, so none of them ran: {why}")
    for name in the_plan.data_files:
        stale = the_plan.older_than_code(name)
        if stale:
            print(f"warning: {name} is older than {', '.join(stale)}: if your numbers changed, "
                  f"run {the_plan.notebook or 'the notebook'} again so that {name} holds your code's numbers")


def _may_hand_in(the_plan: plan.Plan, missing: tuple[str, ...], unreadable: dict[str, str],
                 allow_missing: bool) -> bool:
    """False (after one line on stderr) when a graded file is missing or unreadable and
    ``allow_missing`` is not set; True otherwise, with a warning for what the zip lacks."""
    problems = [*missing, *unreadable]
    if not problems:
        return True
    cost = sum(t.points for t in the_plan.tasks if set(t.files) & set(problems))
    which = ", ".join(f"{n} ({'missing' if n in missing else unreadable[n]})" for n in problems)
    tasks = ", ".join(t.id for t in the_plan.tasks if set(t.files) & set(problems))
    if not allow_missing:
        written = [n for n in problems if n in the_plan.data_files]
        how = (f"run {the_plan.notebook} to the end (it writes {', '.join(written)})"
               if written and the_plan.notebook else "add it")
        print(f"{PROG}: refused: {_shown(the_plan.folder)}: {which}, graded in {tasks} "
              f"({cost:g} points); {how}, or pass --allow-missing to hand in without it", file=sys.stderr)
        return False
    print(f"warning: handing in without {which}: {tasks} ({cost:g} points) lose what needs it")
    return True


def _own_run(the_plan: plan.Plan, allow_simulated: bool) -> bool:
    """False (after one line on stderr) when a graded data file records a simulated run and
    ``allow_simulated`` is not set; True otherwise, with a warning when it is handed in anyway."""
    simulated = the_plan.simulated()
    if not simulated:
        return True
    which = "; ".join(f"{name}: {why}" for name, why in simulated.items())
    # the grade keeps the points for a file that is there and readable, so the whole task is not at stake
    stake = ", ".join(f"of {t.id}'s {t.points:g} points" for t in the_plan.tasks if set(t.files) & set(simulated))
    if not allow_simulated:
        print(f"{PROG}: refused: {which}. The Measure table grades your own machine's numbers: run "
              f"{the_plan.notebook or 'the notebook'} on your CPU or GPU ({settings.RUN_ON.name} unset, auto, "
              f"cpu or cuda), "
              f"or pass --allow-simulated to hand it in anyway (its checks of the numbers fail: {stake}, only "
              f"those for a present, readable file remain)", file=sys.stderr)
        return False
    print(f"warning: handing in a simulated run ({which}): the checks of its numbers fail")
    return True


def _write_zip(the_plan: plan.Plan, missing: tuple[str, ...], outcome: public.Outcome | None,
               out: str | None) -> None:
    """Write the zip (to ``out``, or <assignment>-submission.zip beside course.yml) and say so."""
    top = the_plan.course.parent
    target = Path(out) if out else top / f"{the_plan.assignment}-submission.zip"
    names = [n for n in the_plan.files if n not in missing]
    written = archive.write(the_plan.folder, names, target)
    failed = sum(c.failed for c in outcome.tasks.values()) if outcome is not None else 0
    print(f"wrote {_shown(written)}: {', '.join(names)}")
    if failed:
        print(f"note: {failed} public test(s) failed; the grader runs them and hidden checks too")
    print("hand in that zip where your course asks for it (Gradescope: upload the zip or the files)")

"""course.yml, parsed and validated: assignments, tasks, points, time limits, device, visibility.

A wrong key or type raises UsageError with one line naming the key and the file. The file is read
by shared/course_file.py (the one parser, which the student's conftest.py uses too); this module
checks every key of the grader's schema and builds the dataclasses.

Which course.yml: the command line loads one, once (``--course``, else ``find()``: the nearest
course.yml from the current folder upward that has an ``assignments`` mapping, else the one of
the checkout this package lives in), and passes the Course down; worker processes are given its
file as an argument. Nothing here reads or writes the environment.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import late as late_policy
from autograder.core.errors import UsageError
from shared import course_file

ROOT = Path(__file__).resolve().parents[2]
COURSE_FILE = ROOT / "course.yml"
DEVICES = ("sim", "cpu", "cuda")
VISIBILITIES = ("hidden", "after_due_date", "after_published", "visible")


@dataclass(frozen=True)
class Task:
    """One graded task: ``points`` in points, ``functions`` as 'module.function' names."""

    id: str
    title: str
    points: float
    lesson: str
    functions: tuple[str, ...]
    #: (check id, points) of each check of the task, from the task's ``checks`` mapping (they sum to
    #: ``points``); empty: the points are split across the task's checks by their weights.
    check_points: tuple[tuple[str, float], ...] = ()
    #: files the task grades besides its functions' modules (course.yml's optional ``files``),
    #: plain names in the student's folder such as 'measurements.json'
    files: tuple[str, ...] = ()

    @property
    def handed_in(self) -> tuple[str, ...]:
        """The files this task grades: its functions' modules, then its ``files``."""
        modules = [f"{f.split('.', 1)[0]}.py" for f in self.functions]
        return tuple(dict.fromkeys([*modules, *self.files]))

    def points_of(self, check_id: str) -> float | None:
        """The points course.yml gives ``check_id``, or None when it names no such check."""
        return dict(self.check_points).get(check_id)

    def label(self, function: str) -> str:
        """The stub label of ``function`` ('module.name'), such as 'task1.2: bandwidth_sweep'."""
        index = self.functions.index(function) + 1
        return f"{self.id}.{index}: {function.split('.', 1)[1]}"


@dataclass(frozen=True)
class ManualItem:
    """A part of the grade a person scores (an Explain-It-Back answer, say): ``points`` in points,
    entered per student in grade-all's OUT/overrides.csv (autograder/classdata/overrides.py)."""

    id: str
    title: str
    points: float


@dataclass(frozen=True)
class Assignment:
    """One assignment. ``time_limit_s`` in seconds per call, ``memory_limit_mb`` in MiB."""

    name: str
    title: str
    folder: str
    grader: str          # dotted package of this assignment's checks, mistakes and plots
    device: str
    sim_profile: str
    time_limit_s: float
    memory_limit_mb: int
    visibility: str
    tasks: tuple[Task, ...]
    root: Path = ROOT    # the course folder (where course.yml lies): solutions/ and assignments/
    late: "late_policy.LatePolicy | None" = None   # optional ``late:``: due date, grace, policy
    #: optional: a student call may take this many times the reference's time for the same call
    #: (autograder/sandbox/calltime.py), never less than ``time_limit_floor_s`` seconds and never
    #: more than ``time_limit_s``
    time_limit_multiple: float = 300.0
    time_limit_floor_s: float = 10.0
    #: optional ``manual:``: parts of the grade a person scores, after the tasks in the gradebook
    manual: tuple[ManualItem, ...] = ()

    @property
    def max_score(self) -> float:
        """Points of the tasks and the manual items together."""
        return sum(t.points for t in self.tasks) + sum(m.points for m in self.manual)

    @property
    def handed_in(self) -> tuple[str, ...]:
        """Every file a submission holds, in course order: each task's ``handed_in``."""
        return tuple(dict.fromkeys(name for t in self.tasks for name in t.handed_in))

    def task(self, task_id: str) -> Task:
        for t in self.tasks:
            if t.id == task_id:
                return t
        raise KeyError(task_id)

    def task_of(self, function: str) -> Task | None:
        """The task that lists ``function`` ('module.name'), or None."""
        for t in self.tasks:
            if function in t.functions:
                return t
        return None

    @property
    def solutions_dir(self) -> Path:
        return self.root / "solutions" / self.folder

    @property
    def assignments_dir(self) -> Path:
        return self.root / "assignments" / self.folder


@dataclass(frozen=True)
class Course:
    """One course file, loaded: ``path`` is the course.yml it was read from (absolute)."""

    title: str
    assignments: dict[str, Assignment]
    path: Path = field(default=COURSE_FILE)

    def assignment(self, name: str | None = None) -> Assignment:
        """The assignment called ``name``; None: the first one course.yml lists."""
        if name is None:
            return next(iter(self.assignments.values()))
        if name not in self.assignments:
            known = ", ".join(sorted(self.assignments))
            raise UsageError(f"unknown assignment {name!r}; course.yml has: {known}")
        return self.assignments[name]


_TASK_KEYS = {"id": str, "title": str, "points": (int, float), "lesson": str, "functions": list}
_ASSIGNMENT_KEYS = {"title": str, "folder": str, "grader": str, "device": str, "sim_profile": str,
                    "time_limit_s": (int, float), "memory_limit_mb": int, "visibility": str,
                    "tasks": list}


def find(path: Path | str | None = None, start: Path | str | None = None) -> Path:
    """The course file to use: ``path`` (a course.yml or the folder holding one), else the nearest
    course.yml with an ``assignments`` key in ``start`` (default: the current folder) or a folder
    above it (a broken one too: loading it names the problem), else the checkout's. UsageError when
    ``path`` holds no course file."""
    if path is not None:
        given = Path(path).expanduser()
        candidate = given / "course.yml" if given.is_dir() else given
        if not candidate.is_file():
            raise UsageError(f"--course {path}: no such course file (give a course.yml or the folder holding one)")
        return candidate.resolve()
    here = Path(start or os.getcwd()).resolve()
    for folder in (here, *here.parents):
        candidate = folder / "course.yml"
        if candidate.is_file() and course_file.has_assignments(candidate):
            return candidate
    return COURSE_FILE


def load(path: Path | str | None = None) -> Course:
    """Parse and validate ``path`` (default: ``find()``'s); UsageError names the first wrong key
    and the file. The course's folder goes on sys.path, so grader packages beside it import."""
    path = Path(path).resolve() if path is not None else find()
    try:
        the_course = _build(path, course_file.read(path))
    except course_file.CourseFileError as exc:
        raise UsageError(str(exc)) from None
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.append(folder)
    return the_course


def _build(path: Path, data: dict) -> Course:
    where = str(path)
    _expect_keys(data, {"course": str, "assignments": dict}, where, "")
    assignments = {}
    for name, raw in data["assignments"].items():
        prefix = f"assignments.{name}"
        raw = dict(raw) if isinstance(raw, dict) else raw
        late_raw = raw.pop("late", None) if isinstance(raw, dict) else None   # optional: late work
        manual_raw = raw.pop("manual", None) if isinstance(raw, dict) else None   # optional: scored by a person
        time_keys = _time_limit_keys(raw, where, prefix)   # optional: limits from the reference's time
        _expect_keys(raw, _ASSIGNMENT_KEYS, where, prefix)
        late = late_policy.parse(late_raw, where, f"{prefix}.late")
        _one_of(raw["device"], DEVICES, where, f"{prefix}.device")
        _one_of(raw["visibility"], VISIBILITIES, where, f"{prefix}.visibility")
        _positive(raw["time_limit_s"], where, f"{prefix}.time_limit_s")
        _positive(raw["memory_limit_mb"], where, f"{prefix}.memory_limit_mb")
        _known_profile(raw["sim_profile"], where, f"{prefix}.sim_profile")
        if not all(part.isidentifier() for part in raw["grader"].split(".")):
            raise UsageError(f"{where}: key '{prefix}.grader' must be a dotted package name, got {raw['grader']!r}")
        tasks = []
        for i, t in enumerate(course_file.tasks(data, name, where)):
            tprefix = f"{prefix}.tasks[{i}]"
            t = dict(t)
            check_points = t.pop("checks", None)    # optional: points per check
            files = _task_files(t.pop("files", []), where, tprefix)   # optional: graded files
            _expect_keys(t, _TASK_KEYS, where, tprefix)
            _positive(t["points"], where, f"{tprefix}.points", allow_zero=True)
            check_points = _check_points(check_points, t["points"], where, tprefix)
            for f in t["functions"]:
                if not isinstance(f, str) or f.count(".") != 1:
                    raise UsageError(f"{where}: {tprefix}.functions entries must be 'module.function', got {f!r}")
            tasks.append(Task(id=t["id"], title=t["title"], points=float(t["points"]),
                              lesson=t["lesson"], functions=tuple(t["functions"]), check_points=check_points,
                              files=files))
        manual = _manual_items(manual_raw, {t.id for t in tasks}, where, f"{prefix}.manual")
        fields = {k: raw[k] for k in _ASSIGNMENT_KEYS if k != "tasks"}
        assignments[name] = Assignment(name=name, tasks=tuple(tasks), root=path.resolve().parent,
                                       late=late, manual=manual, **time_keys, **fields)
    return Course(title=data["course"], assignments=assignments, path=path.resolve())


# The key checks of shared/course_file.py (they raise CourseFileError; load() turns it into UsageError).
_expect_keys = course_file.expect_keys
_one_of = course_file.one_of
_positive = course_file.positive


#: Optional keys of an assignment: (smallest value, what it is).
_TIME_LIMIT_KEYS = {"time_limit_multiple": (1, "a multiple of the reference's time"),
                    "time_limit_floor_s": (0, "seconds")}


def _time_limit_keys(raw, where, prefix) -> dict:
    """The optional time-limit keys of one assignment (popped from ``raw``), checked."""
    found = {}
    for key, (least, what) in _TIME_LIMIT_KEYS.items():
        if not isinstance(raw, dict) or key not in raw:
            continue
        value = raw.pop(key)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not (
                value > least or key == "time_limit_multiple" and value == least):
            raise UsageError(f"{where}: key '{prefix}.{key}' must be a number "
                             f"{'>=' if key == 'time_limit_multiple' else '>'} {least} ({what}), got {value!r}")
        found[key] = float(value)
    return found


def _task_files(raw, where, tprefix) -> tuple[str, ...]:
    """A task's ``files``: plain file names (no folder), each once."""
    if not isinstance(raw, list) or not all(isinstance(name, str) for name in raw):
        raise UsageError(f"{where}: key '{tprefix}.files' must be a list of file names, got {raw!r}")
    for name in raw:
        if not name or "/" in name or "\\" in name or name in (".", ".."):
            raise UsageError(f"{where}: {tprefix}.files: {name!r} is not a plain file name")
    if len(set(raw)) != len(raw):
        raise UsageError(f"{where}: {tprefix}.files names a file twice")
    return tuple(raw)


def _manual_items(raw, task_ids, where, prefix) -> tuple[ManualItem, ...]:
    """An assignment's ``manual`` list (each ``{id, title, points}``), checked: ids distinct from
    each other and from the task ids and ``total``."""
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise UsageError(f"{where}: key '{prefix}' must be a list of {{id, title, points}}")
    items, seen = [], set(task_ids) | {"total"}
    for i, item in enumerate(raw):
        name = f"{prefix}[{i}]"
        _expect_keys(item, {"id": str, "title": str, "points": (int, float)}, where, name)
        _positive(item["points"], where, f"{name}.points")
        if item["id"] in seen:
            raise UsageError(f"{where}: key '{name}.id' {item['id']!r} is already a task, manual item or 'total'")
        seen.add(item["id"])
        items.append(ManualItem(id=item["id"], title=item["title"], points=float(item["points"])))
    return tuple(items)


def _check_points(raw, points, where, tprefix) -> tuple[tuple[str, float], ...]:
    """A task's ``checks`` (check id -> points, each >= 0) as pairs, refused unless they sum to its points."""
    if raw is None:
        return ()
    if not isinstance(raw, dict) or not raw:
        raise UsageError(f"{where}: key '{tprefix}.checks' must be a mapping of check id -> points")
    for check_id, value in raw.items():
        if not isinstance(check_id, str) or isinstance(value, bool) or not isinstance(value, (int, float)):
            raise UsageError(f"{where}: key '{tprefix}.checks.{check_id}' must be a number of points, got {value!r}")
        _positive(value, where, f"{tprefix}.checks.{check_id}", allow_zero=True)
    total = sum(raw.values())
    if abs(total - points) > 1e-9 * max(1.0, abs(points)):
        raise UsageError(f"{where}: the points of '{tprefix}.checks' sum to {total:g}, "
                         f"but the task's points are {points:g}")
    return tuple((check_id, float(value)) for check_id, value in raw.items())


def _known_profile(value, where, name) -> None:
    from shared import tables

    try:
        tables.device(value)
    except KeyError as exc:
        raise UsageError(f"{where}: key {name!r}: {exc.args[0]}") from None

"""course.yml, parsed and validated: assignments, tasks, points, time limits, device, visibility.

A wrong key or type raises UsageError with one line naming the key and the file.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from autograder.core.errors import UsageError

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

    def label(self, function: str) -> str:
        """The stub label of ``function`` ('module.name'), such as 'task1.2: bandwidth_sweep'."""
        index = self.functions.index(function) + 1
        return f"{self.id}.{index}: {function.split('.', 1)[1]}"


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

    @property
    def max_score(self) -> float:
        return sum(t.points for t in self.tasks)

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
    title: str
    assignments: dict[str, Assignment]

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


def load(path: Path | str = COURSE_FILE) -> Course:
    """Parse and validate ``path``; UsageError names the first wrong key and the file."""
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"{path}: cannot read course file ({exc.strerror})") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise UsageError(f"{path}{where}: not valid YAML") from None
    where = str(path)
    _expect_keys(data, {"course": str, "assignments": dict}, where, "")
    if not data["assignments"]:
        raise UsageError(f"{where}: 'assignments' lists no assignment")
    assignments = {}
    for name, raw in data["assignments"].items():
        prefix = f"assignments.{name}"
        _expect_keys(raw, _ASSIGNMENT_KEYS, where, prefix)
        _one_of(raw["device"], DEVICES, where, f"{prefix}.device")
        _one_of(raw["visibility"], VISIBILITIES, where, f"{prefix}.visibility")
        _positive(raw["time_limit_s"], where, f"{prefix}.time_limit_s")
        _positive(raw["memory_limit_mb"], where, f"{prefix}.memory_limit_mb")
        _known_profile(raw["sim_profile"], where, f"{prefix}.sim_profile")
        if not all(part.isidentifier() for part in raw["grader"].split(".")):
            raise UsageError(f"{where}: key '{prefix}.grader' must be a dotted package name, got {raw['grader']!r}")
        tasks, seen = [], set()
        for i, t in enumerate(raw["tasks"]):
            tprefix = f"{prefix}.tasks[{i}]"
            _expect_keys(t, _TASK_KEYS, where, tprefix)
            if not t["id"].isidentifier():
                raise UsageError(f"{where}: {tprefix}.id must be an identifier (a pytest marker), got {t['id']!r}")
            if t["id"] in seen:
                raise UsageError(f"{where}: {tprefix}.id {t['id']!r} is used twice")
            seen.add(t["id"])
            _positive(t["points"], where, f"{tprefix}.points", allow_zero=True)
            for f in t["functions"]:
                if not isinstance(f, str) or f.count(".") != 1:
                    raise UsageError(f"{where}: {tprefix}.functions entries must be 'module.function', got {f!r}")
            tasks.append(Task(id=t["id"], title=t["title"], points=float(t["points"]),
                              lesson=t["lesson"], functions=tuple(t["functions"])))
        fields = {k: raw[k] for k in _ASSIGNMENT_KEYS if k != "tasks"}
        assignments[name] = Assignment(name=name, tasks=tuple(tasks), root=path.resolve().parent, **fields)
    return Course(title=data["course"], assignments=assignments)


def _expect_keys(raw, spec: dict, where: str, prefix: str) -> None:
    label = prefix or "the top level"
    if not isinstance(raw, dict):
        raise UsageError(f"{where}: {label} must be a mapping")
    for key in raw:
        if key not in spec:
            name = f"{prefix}.{key}" if prefix else key
            raise UsageError(f"{where}: unknown key {name!r} (expected one of: {', '.join(spec)})")
    for key, kind in spec.items():
        name = f"{prefix}.{key}" if prefix else key
        if key not in raw:
            raise UsageError(f"{where}: missing key {name!r}")
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise UsageError(f"{where}: key {name!r} must be {want}, got {type(value).__name__} {value!r}")


def _one_of(value, allowed, where, name) -> None:
    if value not in allowed:
        raise UsageError(f"{where}: key {name!r} must be one of {', '.join(allowed)}, got {value!r}")


def _positive(value, where, name, allow_zero=False) -> None:
    if value < 0 or (value == 0 and not allow_zero):
        raise UsageError(f"{where}: key {name!r} must be positive, got {value!r}")


def _known_profile(value, where, name) -> None:
    from shared import tables

    try:
        tables.device(value)
    except KeyError as exc:
        raise UsageError(f"{where}: key {name!r}: {exc.args[0]}") from None

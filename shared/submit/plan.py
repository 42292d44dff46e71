"""What a submission of the lab in a folder is graded on, and which of those files the folder has.

The graded files come from course.yml, through shared/course_file.py (the parser the grader uses):
each task's modules (``functions: [bw.copy_bandwidth, ...]`` -> bw.py) and its ``files`` (the lab
notebook, measurements.json). The course file is the nearest course.yml at or above the folder,
and the assignment is the one course.yml keeps in a folder of that name.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from shared import course_file, simulated_run


class PlanError(Exception):
    """The folder or its course file cannot be used; the message is one line naming which."""


@dataclass(frozen=True)
class TaskFiles:
    """One task: its id, title and points (course points), and the files it grades."""

    id: str
    title: str
    points: float
    files: tuple[str, ...]


@dataclass(frozen=True)
class Plan:
    """The lab ``folder``, its ``course`` file, the ``assignment`` name and what each task grades."""

    folder: Path
    course: Path
    assignment: str
    tasks: tuple[TaskFiles, ...]

    @property
    def files(self) -> tuple[str, ...]:
        """Every graded file, in course order, each once."""
        return tuple(dict.fromkeys(name for task in self.tasks for name in task.files))

    @property
    def notebook(self) -> str | None:
        """The graded lab notebook (a .ipynb), or None."""
        return next((name for name in self.files if name.endswith(".ipynb")), None)

    @property
    def data_files(self) -> tuple[str, ...]:
        """Graded files that are neither code nor the notebook: what a run of the notebook writes
        (measurements.json), whose numbers go stale when the code changes."""
        return tuple(name for name in self.files if not name.endswith((".py", ".ipynb")))

    def missing(self) -> tuple[str, ...]:
        """Graded files that are not in the folder."""
        return tuple(name for name in self.files if not (self.folder / name).is_file())

    def unreadable(self) -> dict[str, str]:
        """Present graded files the grader could not read: JSON (.json, .ipynb) that does not parse.
        File name -> why, in a few words."""
        problems = {}
        for name in self.files:
            path = self.folder / name
            if path.suffix in (".json", ".ipynb") and path.is_file():
                try:
                    json.loads(path.read_text(encoding="utf-8"))
                except (UnicodeDecodeError, ValueError):
                    problems[name] = "not valid JSON"
        return problems

    def simulated(self) -> dict[str, str]:
        """Graded data files that record a run on the simulated GPU (shared/simulated_run.py): a JSON
        object whose ``device`` says so. File name -> how it shows it, in a clause."""
        found = {}
        for name in self.data_files:
            path = self.folder / name
            if path.suffix != ".json" or not path.is_file():
                continue
            try:
                data = json.loads(path.read_text(encoding="utf-8"))
            except (UnicodeDecodeError, ValueError):
                continue            # unreadable() names it
            device = data.get("device") if isinstance(data, dict) else None
            if simulated_run.is_simulated(device):
                found[name] = simulated_run.why(device)
        return found

    def older_than_code(self, name: str) -> list[str]:
        """The graded modules modified after ``name`` was written (a Measure table from old code)."""
        path = self.folder / name
        if not path.is_file():
            return []
        written = path.stat().st_mtime
        return [m for m in self.files if m.endswith(".py") and (self.folder / m).is_file()
                and (self.folder / m).stat().st_mtime > written]


def _course_file(folder: Path) -> Path:
    for where in (folder, *folder.parents):
        candidate = where / "course.yml"
        if candidate.is_file() and course_file.has_assignments(candidate):
            return candidate
    raise PlanError(f"{folder}: no course.yml in this folder or any folder above it "
                    "(run from the unpacked student bundle or the course repository)")


def default_folder(cwd: Path) -> Path:
    """The lab folder when none is named: ``cwd`` itself when course.yml keeps an assignment in a
    folder of its name, else ``assignments/<folder>`` of the only (or first) assignment."""
    path = _course_file(cwd)
    data = _read(path)
    folders = [spec.get("folder", name) for name, spec in data["assignments"].items()]
    if cwd.name in folders and cwd != path.parent:
        return cwd
    return path.parent / "assignments" / folders[0]


def _read(path: Path) -> dict:
    try:
        return course_file.read(path)
    except course_file.CourseFileError as exc:
        raise PlanError(str(exc)) from None


def _module_file(function: object, where: Path, task_id: str) -> str:
    if not isinstance(function, str) or function.count(".") != 1:
        raise PlanError(f"{where}: task {task_id}: functions entries must be 'module.function', got {function!r}")
    return function.split(".", 1)[0] + ".py"


def load(folder: Path | str) -> Plan:
    """The plan of the lab in ``folder``; PlanError (one line) when it cannot be made."""
    folder = Path(folder).resolve()
    if not folder.is_dir():
        raise PlanError(f"{folder}: no such folder")
    path = _course_file(folder)
    data = _read(path)
    try:
        name = course_file.assignment_in_folder(data, folder.name, path)
        raw_tasks = course_file.tasks(data, name, path)
    except course_file.CourseFileError as exc:
        raise PlanError(str(exc)) from None
    tasks = []
    for raw in raw_tasks:
        modules = [_module_file(f, path, raw["id"]) for f in raw.get("functions") or []]
        extra = raw.get("files") or []
        if not isinstance(extra, list) or not all(isinstance(n, str) for n in extra):
            raise PlanError(f"{path}: task {raw['id']}: 'files' must be a list of file names")
        tasks.append(TaskFiles(id=raw["id"], title=str(raw.get("title", "")), points=float(raw.get("points", 0)),
                               files=tuple(dict.fromkeys([*modules, *extra]))))
    return Plan(folder=folder, course=path, assignment=name, tasks=tuple(tasks))

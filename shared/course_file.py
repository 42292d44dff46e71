"""course.yml read into plain data: the one parser of the course file.

Two readers use it: the grader (autograder/core/course.py builds its dataclasses on ``read`` and
checks every key of its own schema with ``expect_keys``, ``one_of`` and ``positive``) and the
student's conftest.py (the pytest task markers come from ``tasks``). So both refuse a broken file
with the same single line, naming the key and the file. It lives in shared/ because the student
bundle ships shared/ and course.yml but no grader code; it returns plain dicts and lists only.
"""
from __future__ import annotations

import functools
import os
from pathlib import Path

import yaml

from shared import yamlfile


class CourseFileError(ValueError):
    """course.yml cannot be used; the message is one line naming the key and the file."""


def read(path: Path | str) -> dict:
    """The parsed ``path``: a mapping whose ``assignments`` is a non-empty mapping of mappings.

    Raises CourseFileError for an unreadable file, invalid YAML (with its line) or that shape broken.
    """
    path = Path(path)
    try:
        data = yamlfile.safe_load(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise CourseFileError(f"{path}: cannot read course file ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise CourseFileError(f"{path}: not UTF-8 text") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark else ""
        raise CourseFileError(f"{path}{where}: not valid YAML") from None
    if not isinstance(data, dict):
        raise CourseFileError(f"{path}: the top level must be a mapping")
    if "assignments" not in data:
        raise CourseFileError(f"{path}: missing key 'assignments'")
    assignments = data["assignments"]
    if not isinstance(assignments, dict):
        raise CourseFileError(f"{path}: key 'assignments' must be dict, got "
                              f"{type(assignments).__name__} {assignments!r}")
    if not assignments:
        raise CourseFileError(f"{path}: 'assignments' lists no assignment")
    for name, raw in assignments.items():
        if not isinstance(raw, dict):
            raise CourseFileError(f"{path}: assignments.{name} must be a mapping")
    return data


def has_assignments(path: Path | str) -> bool:
    """Whether ``path`` is meant as a course file: a mapping with an ``assignments`` key.

    False for another tool's YAML without one, or a file that cannot be read; True for invalid
    YAML too, so that a search stops at a broken course file and ``read`` names its line, instead
    of going on to another course. Remembered per file version (path, size, mtime): the grader
    asks before every sandboxed child it starts, and parsing course.yml costs ~50 ms each time.
    """
    try:
        info = os.stat(path)
    except OSError:
        return False
    return _has_assignments(str(Path(path).resolve()), info.st_size, info.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _has_assignments(path: str, _size: int, _mtime_ns: int) -> bool:
    try:
        data = yamlfile.safe_load(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        return False
    except yaml.YAMLError:
        return True
    return isinstance(data, dict) and "assignments" in data


def tasks(data: dict, name: str, where: Path | str) -> list[dict]:
    """The task mappings of assignment ``name`` of ``data`` (from ``read``), in file order.

    Each task is a mapping with an ``id`` that is an identifier (a pytest marker), used once.
    Its other keys are the caller's to check (see ``expect_keys``).
    """
    prefix = f"assignments.{name}"
    raw = data["assignments"][name].get("tasks")
    if not isinstance(raw, list):
        missing = "tasks" not in data["assignments"][name]
        raise CourseFileError(f"{where}: missing key '{prefix}.tasks'" if missing else
                              f"{where}: key '{prefix}.tasks' must be list, got {type(raw).__name__} {raw!r}")
    seen = set()
    for i, task in enumerate(raw):
        tprefix = f"{prefix}.tasks[{i}]"
        if not isinstance(task, dict):
            raise CourseFileError(f"{where}: {tprefix} must be a mapping")
        if not isinstance(task.get("id"), str):
            raise CourseFileError(f"{where}: key '{tprefix}.id' must be str, got "
                                  f"{type(task.get('id')).__name__} {task.get('id')!r}")
        if not task["id"].isidentifier():
            raise CourseFileError(f"{where}: {tprefix}.id must be an identifier (a pytest marker), got {task['id']!r}")
        if task["id"] in seen:
            raise CourseFileError(f"{where}: {tprefix}.id {task['id']!r} is used twice")
        seen.add(task["id"])
    return raw


def assignment_in_folder(data: dict, folder: str, where: Path | str) -> str:
    """The name of the assignment of ``data`` kept in ``folder`` (its ``folder`` key, else its name)."""
    for name, spec in data["assignments"].items():
        if spec.get("folder", name) == folder:
            return name
    raise CourseFileError(f"{where}: no assignment kept in folder {folder!r}")


def expect_keys(raw, spec: dict, where: Path | str, prefix: str) -> None:
    """``raw`` is a mapping with exactly the keys of ``spec`` (key -> type or tuple of types)."""
    label = prefix or "the top level"
    if not isinstance(raw, dict):
        raise CourseFileError(f"{where}: {label} must be a mapping")
    for key in raw:
        if key not in spec:
            name = f"{prefix}.{key}" if prefix else key
            raise CourseFileError(f"{where}: unknown key {name!r} (expected one of: {', '.join(spec)})")
    for key, kind in spec.items():
        name = f"{prefix}.{key}" if prefix else key
        if key not in raw:
            raise CourseFileError(f"{where}: missing key {name!r}")
        value = raw[key]
        if isinstance(value, bool) or not isinstance(value, kind):
            want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
            raise CourseFileError(f"{where}: key {name!r} must be {want}, got {type(value).__name__} {value!r}")


def one_of(value, allowed, where: Path | str, name: str) -> None:
    """``value`` is one of ``allowed``."""
    if value not in allowed:
        raise CourseFileError(f"{where}: key {name!r} must be one of {', '.join(allowed)}, got {value!r}")


def positive(value, where: Path | str, name: str, allow_zero: bool = False) -> None:
    """``value`` (a number) is above zero, or at least zero with ``allow_zero``."""
    if value < 0 or (value == 0 and not allow_zero):
        raise CourseFileError(f"{where}: key {name!r} must be positive, got {value!r}")

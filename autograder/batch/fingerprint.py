"""Fingerprints of everything that can change a verdict, so a fix regrades the class and the
regrade log can say what changed.

- ``deciding_files(asg)``: every file a grading reads to reach a verdict, relative to the project
  root: the grader package's code and data (``DECIDING``: a law's table of cases, a mistake
  catalogue) but its fixtures; the grading engine (``ENGINE``: the steps, the sandbox, the child's
  runtime, the GPU checks); every project module those import, found by reading their imports
  (the simulated GPU in shared/simgpu, the GPU rubric in shared/lessons, shared/validate.py ...),
  with the data files beside them and in shared/data; and the reference solution
  (solutions/<folder>/). Read without importing the checks (the grade-all parent never imports
  torch).
- ``manifest(asg)``: each of those files with a hash of its bytes; ``grader_digest(asg)`` one
  digest of them all, part of grade-all's grading key.
- ``of_checks(asg, ids)``: per check id, ``<module file>:<sha256 of it>``; computed in the worker,
  which has the checks imported, and stored in the student's results.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import importlib.util
import inspect
import sys
from pathlib import Path

#: Folders that never decide a grade.
SKIP = ("fixtures", "__pycache__")
#: What of a deciding folder's files decides a grade: its code and the data its checks read.
DECIDING = (".py", ".json", ".yml", ".yaml")
#: The grading engine's own modules (their imports are followed too).
ENGINE = ("autograder.grading.grade", "autograder.gpu.checks", "autograder.gpu.probe",
          "autograder.runtime.child", "autograder.sandbox.launch")
#: Parts of the project that never score a check: what records, reports and exports a grading
#: (a lesson reaches them only for names such as JUNK_NAMES); not followed.
NOT_DECIDING = ("autograder/batch/", "autograder/classdata/", "autograder/reports/", "autograder/exports/",
                "autograder/similarity/", "autograder/commands/", "autograder/cli.py",
                "autograder/__main__.py")
#: Data folders the simulated GPU and the lessons read by path.
DATA = ("shared/data",)
#: The project's top-level packages: imports of anything else (torch, the standard library) are
#: pinned by requirements.txt, not fingerprinted here.
PROJECT = ("autograder", "shared")
ROOT = Path(__file__).resolve().parents[2]


def _file_hash(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()[:12]


def grader_digest(asg) -> str:
    """One digest of every file that can change ``asg``'s verdicts (``manifest``)."""
    h = hashlib.sha256()
    for rel, digest in sorted(manifest(asg).items()):
        h.update(f"{rel}\0{digest}\0".encode())
    return h.hexdigest()[:16]


def manifest(asg) -> dict[str, str]:
    """``{file: hash of its bytes}`` of ``deciding_files(asg)``; names relative to the project
    root (or absolute, for a course kept elsewhere)."""
    return dict(_manifest(asg.grader, str(asg.solutions_dir), _declared(asg)))


@functools.lru_cache(maxsize=8)
def _manifest(grader: str, solutions: str, declared: tuple[str, ...]) -> tuple[tuple[str, str], ...]:
    return tuple((_name(p), _file_hash(p)) for p in _deciding(grader, Path(solutions), declared))


def deciding_files(asg) -> list[Path]:
    """Every file that can change a verdict of ``asg`` (the module docstring), sorted."""
    return list(_deciding(asg.grader, asg.solutions_dir, _declared(asg)))


def _declared(asg) -> tuple[str, ...]:
    """The modules and packages the assignment's Lesson declares ``deciding``."""
    from autograder.core import lesson
    return tuple(lesson.of(asg).deciding)


def _deciding(grader: str, solutions: Path, declared: tuple[str, ...] = ()) -> tuple[Path, ...]:
    package = Path(importlib.import_module(grader).__file__).resolve().parent
    found: set[Path] = set(_data_files(package, recursive=True))
    for name in declared:                     # what the Lesson names, whether imported or read
        path = _module_file(name)
        if path is not None:
            found |= set(_data_files(path.parent, recursive=True)) if path.name == "__init__.py" else {path}
    if solutions.is_dir():
        found |= set(_data_files(solutions, recursive=True))
    modules = [p for p in found if p.suffix == ".py"]   # the reference's imports run too
    for name in (*ENGINE, grader):
        path = _module_file(name)
        if path is not None:
            modules.append(path)
    code = _closure(modules, (*PROJECT, grader.split(".")[0]))
    found |= code
    for folder in {p.parent for p in code if _inside(p, ROOT)} | {ROOT / d for d in DATA}:
        found |= {p for p in _data_files(folder, recursive=folder.as_posix().endswith(DATA))
                  if p.suffix != ".py"}   # data beside the code: its modules are the closure's
    return tuple(sorted(found))


def _data_files(folder: Path, recursive: bool) -> list[Path]:
    if not folder.is_dir():
        return []
    found = folder.rglob("*") if recursive else folder.iterdir()
    return [p.resolve() for p in found if p.suffix in DECIDING and p.is_file()
            and not any(part in SKIP for part in p.relative_to(folder).parts)]


def _closure(start: list[Path], tops: tuple[str, ...]) -> set[Path]:
    """The Python files of packages ``tops`` that ``start`` reaches through its imports (read,
    not run)."""
    seen: set[Path] = set()
    todo = list(start)
    while todo:
        path = todo.pop()
        if path in seen or not path.is_file() or _name(path).startswith(NOT_DECIDING):
            continue
        seen.add(path)
        todo.extend(_imports_of(path, tops))
    return seen


def _imports_of(path: Path, tops: tuple[str, ...]) -> list[Path]:
    try:
        tree = ast.parse(path.read_bytes(), filename=str(path))
    except (SyntaxError, ValueError, OSError):
        return []
    package = _package_of(path)
    names = []
    for node in _statements(tree):
        if isinstance(node, ast.Import):
            names += [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                parts = package.split(".")
                base = ".".join(p for p in (*parts[:len(parts) - node.level + 1], base) if p)
            names.append(base)
            names += [f"{base}.{a.name}" for a in node.names if a.name != "*"]
    out = []
    for name in names:
        parts = name.split(".")
        if parts[0] not in tops:
            continue
        for i in range(1, len(parts) + 1):   # a package's __init__ runs on the way to a module
            found = _module_file(".".join(parts[:i]))
            if found is not None:
                out.append(found)
    return out


#: What holds statements besides statements: an ``except`` clause and a ``case`` of ``match``.
_HOLDERS = (ast.stmt, ast.excepthandler, ast.match_case)


def _statements(tree: ast.AST):
    """Every statement of ``tree`` at any depth (in functions, classes, branches, handlers), and
    nothing else: an import is a statement, and no expression holds one, so this finds the
    imports ast.walk finds while visiting a tenth of the nodes (the grading key reads about 140
    modules on every grade-all run)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for field in node._fields:
            value = getattr(node, field, None)
            if isinstance(value, list):
                todo.extend(v for v in value if isinstance(v, _HOLDERS))


def _package_of(path: Path) -> str:
    """The dotted package a module file belongs to, from the deepest import root holding it."""
    for root in _import_roots(tuple(sys.path)):
        if _inside(path, root) and root != path.parent:
            return ".".join(path.parent.relative_to(root).parts)
    return ""


@functools.lru_cache(maxsize=8)
def _import_roots(path: tuple[str, ...]) -> list[Path]:
    """The project's root and the folders of ``path`` (sys.path), deepest first."""
    return sorted({ROOT, *(Path(p).resolve() for p in path if p)}, key=lambda r: -len(r.parts))


@functools.lru_cache(maxsize=4096)
def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` (a package's __init__.py), found from its top
    package's folder without importing anything below it; None when it has none (a name
    imported from a module, a compiled module)."""
    top, *rest = name.split(".")
    base = _top_folder(top)
    if base is None:
        return None
    for path in (base.joinpath(*rest, "__init__.py"), base.joinpath(*rest).with_suffix(".py") if rest else None):
        if path is not None and path.is_file():
            return path.resolve()
    return None


@functools.lru_cache(maxsize=64)
def _top_folder(top: str) -> Path | None:
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def _inside(path: Path, root: Path) -> bool:
    try:
        path.relative_to(root)
    except ValueError:
        return False
    return True


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix() if _inside(path, ROOT) else path.as_posix()


def of_checks(asg, ids) -> dict[str, str]:
    """``{check id: 'checks/<module>.py:<hash>'}`` for the registered checks among ``ids``."""
    from autograder.core import lesson
    from autograder.grading.grade import load_checks
    registry = load_checks(asg)
    root = lesson.package_dir(asg)
    out = {}
    for check_id in ids:
        check = registry.get(check_id)
        if check is None:
            continue
        try:
            # the module the check is filed under (a rubric's checks are built by the engine,
            # autograder/gpu/checks.py, but filed under the lesson's module that registered them)
            path = Path(inspect.getsourcefile(sys.modules[check.module])).resolve()
            out[check_id] = f"{path.relative_to(root).as_posix()}:{_file_hash(path)}"
        except (TypeError, OSError, ValueError):
            continue
    return out

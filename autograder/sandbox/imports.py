"""Whether a student module imports only the standard library and what its child preloads (read
from its source, not run).

A child for such a module needs nothing more from the fork server than its own preload (none, or
matplotlib for a plot file), so it may start as a fresh interpreter that imports that preload itself
while the server is still importing torch (autograder/sandbox/launch.py, ``launch_child(early=True)``).
A module that imports anything else waits for the server as before: its import then finds the
libraries already loaded and is timed the same way in every grading.

Files of the submission and of the project (``shared/``, which the child's path holds) are followed
to what they import. The answer errs towards waiting: a file that does not parse, a relative or
dynamic import (``__import__``, ``importlib.import_module``, ``exec``, ``eval``), a module found
nowhere or a file larger than ``MAX_PARSE_BYTES`` counts as "imports more than the standard
library". That bound keeps the grader's own memory small: parsing costs many times the source's
size (docs/performance.md), and a larger file is parsed only by the student's own child, under its
limits, where what it costs is charged to its own checks. A file that hides an import beyond these
only makes its own import slower in a cold grading; it gains nothing.
"""
from __future__ import annotations

import ast
import sys
from pathlib import Path

# The project root: the child's path holds it after the submission's folder (launch.python_path).
from autograder.sandbox.launch import ROOT

#: Largest file parsed here, in bytes (student files are a few KiB; what parsing this much costs
#: the grader's memory: docs/performance.md).
MAX_PARSE_BYTES = 64 * 1024
#: Names whose use may import a module that no import statement shows.
DYNAMIC = frozenset({"__import__", "import_module", "exec", "eval", "run_module", "run_path"})


def imports_only(folder: Path, module: str, preloaded: frozenset[str] = frozenset()) -> bool:
    """True when ``folder/<module>.py``, and every file of ``folder`` or the project it imports,
    imports only the standard library and the top-level packages ``preloaded`` (statically: no
    dynamic import)."""
    roots = (Path(folder), ROOT)
    seen: set[Path] = set()
    todo = [Path(folder) / f"{module}.py"]
    while todo:
        path = todo.pop()
        if path in seen:
            continue
        seen.add(path)
        imported = _imports(path)
        if imported is None:
            return False
        for name, optional in imported:
            top = name.split(".")[0]
            if top in sys.stdlib_module_names or top in preloaded:
                continue
            found = _find(name, roots)
            if found:
                todo.extend(found)
            elif not optional:
                return False
    return True


def _find(name: str, roots: tuple[Path, ...]) -> list[Path]:
    """The files that importing dotted ``name`` runs (each package's __init__.py and the module),
    from the first root that has its top-level name; [] when no root has it."""
    parts = name.split(".")
    for root in roots:
        files, here = [], root
        for i, part in enumerate(parts):
            here = here / part
            if (here / "__init__.py").is_file():
                files.append(here / "__init__.py")
            elif here.with_suffix(".py").is_file() and i == len(parts) - 1:
                files.append(here.with_suffix(".py"))
            else:
                files = [] if i == 0 else None
                break
        if files:
            return files
        if files is None:   # the top level is here but not the rest: nothing else would be tried
            return []
    return []


def _imports(path: Path) -> list[tuple[str, bool]] | None:
    """(dotted name, optional) for each module ``path`` imports (``from a import b`` gives 'a' and
    the optional 'a.b', which may be a name in 'a'); None when it does not parse or imports
    dynamically or relatively."""
    try:
        with open(path, "rb") as fh:
            source = fh.read(MAX_PARSE_BYTES + 1)
        if len(source) > MAX_PARSE_BYTES:
            return None
        tree = ast.parse(source, filename=str(path))
    except (OSError, SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    names: list[tuple[str, bool]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.extend((alias.name, False) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level or not node.module:
                return None
            names.append((node.module, False))
            names.extend((f"{node.module}.{alias.name}", True) for alias in node.names if alias.name != "*")
        elif isinstance(node, ast.Name) and node.id in DYNAMIC:
            return None
        elif isinstance(node, ast.Attribute) and node.attr in DYNAMIC:
            return None
    return names

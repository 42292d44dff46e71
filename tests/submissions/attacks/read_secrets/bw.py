"""Attack: search the whole disk for the hidden checks, the grader and the reference solutions.

``search()`` returns what it found (path and marker); the test asserts it found nothing. While
graded, every bw function runs the search first, then returns the baseline's values.
"""
import os
import sys

ATTACK = True
#: Text found only in the grader, its hidden checks or the reference solutions of this project.
MARKERS = ("from autograder.checks", "def grade_submission(", "REGISTRY[id] = Check(")
PATH_MARKERS = ("/autograder/checks", "/solutions/why17", "course.yml", "/autograder/grade.py")
SKIP = ("/proc", "/sys", "/dev")
SUFFIXES = (".py", ".yml", ".yaml", ".json", ".md", ".txt", ".ipynb", ".toml", ".cfg")


def _guesses():
    """Where the grader probably is: beside the runner that imported us, and the usual places."""
    guesses = ["/autograder/source", "/work/main"]
    runner = sys.modules.get("shared.runner") or sys.modules.get("__main__")
    where = getattr(runner, "__file__", None) or (sys.argv[0] if sys.argv else "")
    if where:
        guesses.append(os.path.dirname(os.path.dirname(os.path.abspath(where))))
    return [os.path.join(g, sub) for g in guesses for sub in ("autograder", "solutions", "course.yml")]


def _look(path, found):
    if any(m in path for m in PATH_MARKERS) and os.access(path, os.R_OK):
        found.append((path, "path"))
    if not path.endswith(SUFFIXES):
        return
    try:
        if os.path.getsize(path) > 512 * 1024:
            return
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError:
        return
    found.extend((path, marker) for marker in MARKERS if marker in text)


def search(limit=50, walk=True):
    """(path, marker) pairs: the likely places first, then (``walk``) every file on the disk."""
    found = []
    here = os.getcwd()
    for guess in _guesses():
        if os.path.isfile(guess):
            _look(guess, found)
        for top, dirs, files in os.walk(guess, onerror=lambda e: None):
            for name in files:
                _look(os.path.join(top, name), found)
    if not walk:
        return found
    for top, dirs, files in os.walk("/", onerror=lambda e: None):
        if top.startswith(SKIP) or top.startswith(here):
            dirs[:] = []
            continue
        for name in files:
            _look(os.path.join(top, name), found)
            if len(found) >= limit:
                return found
    return found


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        search(limit=5, walk=False)
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0

"""The class exports grade-all generates (gradebook.csv, canvas.csv, checks.csv), and hand edits
of them.

They are rewritten on every run, so an edit made in them would be lost silently. Each run records
the sha256 of what it wrote in OUT/.grade-all-exports.json; the next run finds a file that no
longer matches, moves it aside as ``<name>.edited-<time>`` (nothing is lost) and says so in one
warning line that points to OUT/overrides.csv, where manual scores stick.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

from autograder.core.atomic import atomic_write

RECORD = ".grade-all-exports.json"


def _digest(text: bytes) -> str:
    return hashlib.sha256(text).hexdigest()


def write(out: Path, files: dict[str, str], run_at: str, stream) -> None:
    """Write ``files`` (name -> text) in ``out``, each edited copy moved aside first."""
    out = Path(out)
    try:
        known = json.loads((out / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        known = {}
    known = known if isinstance(known, dict) else {}
    stamp = run_at.replace(":", "").replace("-", "")
    for name, text in files.items():
        path = out / name
        try:
            now = _digest(path.read_bytes())
        except OSError:
            now = None
        if now is not None and name in known and now != known[name]:
            aside = path.with_name(f"{name}.edited-{stamp}")
            path.replace(aside)
            if stream is not None:
                print(f"warning: {path} was edited since grade-all wrote it; it is generated on every "
                      f"run, so the edited copy is kept as {aside.name}; put manual scores and changes "
                      f"in {out / 'overrides.csv'} (student,item,points,delta,reason,grader)", file=stream)
        atomic_write(path, text)
        known[name] = _digest(text.encode("utf-8"))
    atomic_write(out / RECORD, json.dumps(known, indent=1, sort_keys=True) + "\n")

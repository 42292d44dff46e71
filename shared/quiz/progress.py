"""Progress kept between quiz sessions: the recent results of each lesson section, in a small JSON file
(``~/.why17-quiz.json`` unless ``--progress PATH`` names another), so that weak sections come first.

The file holds, per section title, its last KEEP results (1 right, 0 missed, oldest first) and the
number of sessions. A section's weakness is (misses + 1) / (answers + 2): a section never asked sits at
0.5, between the ones often missed and the ones usually right, and an old miss fades as new results
push it out. A section with a recent miss comes back before any without one (``rank``).
Sections no longer in the lesson are kept in the file but never asked about.
"""
from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

#: Results kept per section (the newest).
KEEP = 20
#: What the file says it is, so another JSON file is never taken for progress (or overwritten as one).
KIND = "why17 quiz progress"
VERSION = 1


def default_path() -> Path:
    """Where progress is kept unless a path is given: a dot-file in the user's home folder."""
    return Path.home() / ".why17-quiz.json"


class ProgressError(ValueError):
    """The progress file cannot be read or written; the message is one line naming the file."""


@dataclass
class Progress:
    """Recent results per section (1 right, 0 missed, oldest first) and the sessions recorded."""

    path: Path
    sessions: int = 0
    recent: dict[str, list[int]] = field(default_factory=dict)
    added: int = 0      # results recorded since loading

    @classmethod
    def load(cls, path: str | Path) -> Progress:
        """The progress in ``path``; empty when the file does not exist yet (ProgressError when it
        cannot be read or is not a quiz progress file)."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return cls(path)
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or type(exc).__name__
            raise ProgressError(f"progress file {path}: cannot read it ({reason})") from None
        try:
            data = json.loads(text)
        except ValueError:
            raise ProgressError(f"progress file {path}: not JSON; move it away or give --progress another "
                                f"path") from None
        if not isinstance(data, dict) or data.get("kind") != KIND:
            raise ProgressError(f"progress file {path}: not a quiz progress file (no \"kind\": \"{KIND}\"); "
                                f"move it away or give --progress another path")
        sections, sessions = data.get("sections"), data.get("sessions")
        if (data.get("version") != VERSION or not isinstance(sessions, int) or not isinstance(sections, dict)
                or not all(isinstance(v, list) and all(r in (0, 1) for r in v) for v in sections.values())):
            raise ProgressError(f"progress file {path}: malformed (expected version {VERSION}, a session count "
                                f"and lists of 0 and 1 per section); move it away or give --progress another path")
        return cls(path, sessions, {str(k): list(v)[-KEEP:] for k, v in sections.items()})

    def record(self, section: str, right: bool) -> None:
        """Add one result for ``section``, forgetting the oldest beyond KEEP."""
        results = self.recent.setdefault(section, [])
        results.append(1 if right else 0)
        del results[:-KEEP]
        self.added += 1

    @property
    def empty(self) -> bool:
        return not any(self.recent.values())

    def weakness(self, section: str) -> float:
        """(misses + 1) / (answers + 2) over the section's recent results: 0.5 when never asked."""
        results = self.recent.get(section, [])
        return (results.count(0) + 1) / (len(results) + 2)

    def rank(self, section: str) -> tuple[bool, float]:
        """How early ``section`` comes back, higher first: a section with a recent miss before any
        without one (even one never asked), then by weakness."""
        return 0 in self.recent.get(section, []), self.weakness(section)

    def weakest(self, sections) -> list[str]:
        """The ``sections`` with a recent miss, weakest first (ties in the order given)."""
        missed = [s for s in sections if 0 in self.recent.get(s, [])]
        return sorted(missed, key=self.weakness, reverse=True)

    def summary(self, section: str) -> str:
        """"3 of the last 5 missed"."""
        results = self.recent.get(section, [])
        return f"{results.count(0)} of the last {len(results)} missed"

    def save(self) -> None:
        """Write the file whole (a temporary file renamed over it); ProgressError when it cannot be written."""
        data = {"kind": KIND, "version": VERSION, "sessions": self.sessions, "sections": self.recent}
        tmp = self.path.with_name(self.path.name + ".tmp")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
            os.replace(tmp, self.path)
        except OSError as exc:
            raise ProgressError(f"progress file {self.path}: cannot write it ({exc.strerror or exc})") from None

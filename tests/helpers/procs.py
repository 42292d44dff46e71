"""This machine's processes, as the sandbox tests look for strays."""
from __future__ import annotations

import os
from pathlib import Path


def processes_named(name: str) -> list[int]:
    """The pids whose command name (/proc/<pid>/comm) is ``name``."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/comm").read_text().strip() == name:
                    found.append(int(entry))
            except OSError:
                pass
    return found

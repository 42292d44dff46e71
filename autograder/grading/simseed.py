"""The seed of a submission's simulated GPU: the grader's secret together with the submission.

The seeded profile scales bandwidth, peak and L2 (shared/simgpu/profile.py) and draws the probes'
settings and order (autograder/gpu/probe.py). Students hold the simulator's source and their
own files, so a seed computed from the files alone would let them rebuild the profile and return
its numbers without measuring. A secret therefore always exists:

- the SIM_SECRET setting (autograder/core/settings.py) in the grader's environment, when the
  instructor sets one (the same on every grading machine keeps regrades identical everywhere); else
- the course's secret file, ``SECRET_FILE`` beside course.yml (mode 0600), generated on first use
  and never shipped to students (the release and the student zip hold assignments/ only; the
  Gradescope package carries it where only root can read it); else, where the course folder
  cannot be written,
- a secret drawn for this process alone: safe, but a regrade draws another profile.

The secret never reaches student code: the children that run it, and the fork server they fork
from, start from an environment built from scratch (autograder/sandbox/launch.py, forkserver/client.py)
and the secret lives only in the grader's own memory. ``Secret.source`` says which applied; the
results' output names it.
"""
from __future__ import annotations

import hashlib
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

from autograder.core import settings

#: Environment variable holding the grader's secret (any text).
ENV = settings.SIM_SECRET.name
#: The course's secret, beside course.yml.
SECRET_FILE = ".why17-sim-secret"
#: Bytes of randomness in a generated secret.
SECRET_BYTES = 32


@dataclass(frozen=True)
class Secret:
    """The grader's secret and where it came from: 'environment', 'course file' (read or
    generated now) or 'this process only'."""

    text: str
    source: str


_PROCESS_SECRET = secrets.token_hex(SECRET_BYTES)


def course_secret(course_dir: Path | str) -> Secret:
    """The secret in force for the course in ``course_dir`` (see the module docstring)."""
    text = settings.SIM_SECRET.get()
    if text:
        return Secret(text, "environment")
    path = Path(course_dir) / SECRET_FILE
    try:
        return Secret(_read(path), "course file")
    except FileNotFoundError:
        pass
    except OSError:
        return Secret(_PROCESS_SECRET, "this process only")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:                      # another grader made it meanwhile
        return Secret(_read(path), "course file")
    except OSError:
        return Secret(_PROCESS_SECRET, "this process only")
    with os.fdopen(fd, "w", encoding="ascii") as fh:
        fh.write(secrets.token_hex(SECRET_BYTES) + "\n")
    return Secret(_read(path), "course file")


def _read(path: Path) -> str:
    text = path.read_text(encoding="ascii", errors="replace").strip()
    if not text:
        raise OSError(f"{path} is empty")
    return text


def sim_seed(submission_seed: int, secret: Secret | str) -> int:
    """A 64-bit seed from the secret and ``submission_seed`` (the hash of the submission's files)."""
    text = secret.text if isinstance(secret, Secret) else str(secret)
    digest = hashlib.sha256(f"simgpu-profile\0{text}\0{int(submission_seed)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")

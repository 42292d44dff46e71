"""The seed of a submission's simulated GPU: the grader's secret together with the submission.

The seeded profile scales bandwidth, peak and L2 (shared/simgpu/profile.py). Students hold the
simulator's source and their own files, so a seed computed from the files alone would let them
rebuild the profile and return its numbers without measuring. The instructor sets the secret on
every grading machine (environment variable WHY17_SIM_SECRET): regrading stays deterministic,
the same on every machine that shares the secret, and the child that runs student code never
receives it (its environment is built from scratch, autograder/sandbox/parent.py). Without a
secret the seed depends on the files only, and ``secret_set()`` says so.
"""
from __future__ import annotations

import hashlib
import os

#: Environment variable holding the grader's secret (any text).
ENV = "WHY17_SIM_SECRET"


def secret_set() -> bool:
    """Whether this grading machine has a secret (else the seed is reproducible by students)."""
    return bool(os.environ.get(ENV))


def sim_seed(submission_seed: int) -> int:
    """A 64-bit seed from the secret and ``submission_seed`` (the hash of the submission's files)."""
    secret = os.environ.get(ENV, "")
    digest = hashlib.sha256(f"simgpu-profile\0{secret}\0{int(submission_seed)}".encode()).digest()
    return int.from_bytes(digest[:8], "big")

"""What similarity a class shows without copying, to read each pair against.

- the class median: the median similarity over every pair of the class (most pairs are not
  copies, so this is the assignment's natural overlap between two students);
- the reference: the course's own solution (solutions/<folder>/, written apart from every
  student) compared with each student, as a student is compared with another; its median is the
  overlap of two solutions written independently, and a student far above it shares more with
  the reference than independent work does.

All similarities are fractions from 0 to 1, as ``compare.Pair.similarity``.
"""
from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from autograder.similarity import compare

#: The name the reference goes by in the comparison (never a student's: it has a space).
REFERENCE = "the reference"


@dataclass
class Baseline:
    """``class_median`` over all pairs (None without pairs); ``reference``: student -> their
    similarity to the reference solution (empty when the course has none);
    ``reference_median`` over those (None when empty)."""

    class_median: float | None
    reference: dict[str, float] = field(default_factory=dict)

    @property
    def reference_median(self) -> float | None:
        return statistics.median(self.reference.values()) if self.reference else None


def reference_prints(asg) -> dict:
    """The reference solution's fingerprints (file name -> CodeFingerprint), boilerplate removed;
    {} when solutions/<folder>/ holds none of the files."""
    texts = {}
    for name in compare.python_names(asg):
        path = asg.solutions_dir / name
        try:
            texts[name] = path.read_bytes()[:compare.MAX_FILE_BYTES].decode("utf-8", "replace")
        except OSError:
            continue
    return compare.fingerprint_texts(texts, compare.boilerplate_hashes(asg))


def measure(pairs: list[compare.Pair], prints: dict[str, dict], asg) -> Baseline:
    """The class median of ``pairs`` and every student of ``prints`` against the reference."""
    median = statistics.median(p.similarity for p in pairs) if pairs else None
    ref = reference_prints(asg)
    against = {student: compare.compare_pair(REFERENCE, student, ref, fp).similarity
               for student, fp in prints.items()} if ref else {}
    return Baseline(median, against)

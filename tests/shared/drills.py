"""What the quiz's drill tests share: the tolerance they grade with, a finder for one drill, and a
writer that keeps what the quiz says."""
from __future__ import annotations

import random

#: The quiz's tolerance on numeric answers, relative (0.05: within 5% of the worked answer).
TOL = 0.05


class Collect(list):
    """A ``write`` for the quiz that keeps every line; ``text`` is them joined."""

    def __call__(self, line=""):
        self.append(line)

    @property
    def text(self):
        return "\n".join(self)


def find(kind, predicate, tries=5000):
    """The first drill of ``kind`` (over seeds 0, 1, ...) whose prompt satisfies ``predicate``."""
    for seed in range(tries):
        d = kind(random.Random(seed))
        if predicate(d.prompt):
            return d
    raise AssertionError(f"no {kind.__name__} drill matched in {tries} seeds")

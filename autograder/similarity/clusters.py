"""Pairs grouped into clusters: the connected components of the graph whose edges are the pairs
at or above a threshold, so that three students who share one copy show as one group of three,
not as three separate pairs."""
from __future__ import annotations

from dataclasses import dataclass

#: The default threshold, as a fraction: well above what two independently written solutions share
#: once the stubs and the code they dictate are discounted (tests/similarity/test_similarity.py: under 0.3),
#: well below what a renamed copy keeps (over 0.95).
THRESHOLD = 0.5


@dataclass
class Cluster:
    """``name`` (C1, C2, ... largest first), its ``students`` (sorted), and the similarity of its
    closest and its loosest linked pair (fractions)."""

    name: str
    students: list[str]
    highest: float
    lowest: float


def group(pairs, threshold: float = THRESHOLD) -> list[Cluster]:
    """The clusters of two or more students that ``pairs`` (compare.Pair) link at ``threshold``
    or above; largest first, then by their first student."""
    parent: dict[str, str] = {}

    def root(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    linked = [p for p in pairs if p.similarity >= threshold]
    for p in linked:
        parent[root(p.a)] = root(p.b)
    members: dict[str, list[str]] = {}
    for student in parent:
        members.setdefault(root(student), []).append(student)
    groups = sorted((sorted(m) for m in members.values() if len(m) > 1), key=lambda m: (-len(m), m))
    out = []
    for i, students in enumerate(groups, start=1):
        inside = [p.similarity for p in linked if p.a in students]
        out.append(Cluster(f"C{i}", students, max(inside), min(inside)))
    return out


def of_student(clusters: list[Cluster]) -> dict[str, str]:
    """student -> the name of their cluster."""
    return {s: c.name for c in clusters for s in c.students}

"""The similarity report of a class: OUT/pairs.csv (every pair, most similar first) and
OUT/report.html (the class's baseline, the clusters, the top pairs with their matching regions
side by side).

pairs.csv columns: ``rank``, ``student_a``, ``student_b``, ``similarity`` (percent of both sides'
fingerprinted code that the other side has too, boilerplate excluded), ``files`` (per file both
hold: ``name a%/b%``), ``matched_tokens`` (filtered tokens in matching regions, both sides),
``cluster`` (C1, C2, ... when the pair links a cluster at the threshold, else empty: clusters.py),
``a_vs_reference`` and ``b_vs_reference`` (each student against the course's reference solution,
percent; empty without one), ``class_median`` (the median pair of the class, percent: baseline.py).
Spreadsheet-safe (autograder/core/csvsafe.py): a student name that starts with a formula
character gets a quote in front.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

from autograder.classdata import discover, store
from autograder.core import csvsafe
from autograder.similarity import baseline as baselines
from autograder.similarity import clusters as grouping
from autograder.similarity import compare, report_html

PAIRS = "pairs.csv"
REPORT = "report.html"
#: Pairs shown with their code in report.html (all of them are in pairs.csv).
TOP = 25


def _percent(x: float | None):
    return "" if x is None else csvsafe.Number(f"{100 * x:.1f}")


def pairs_csv(pairs: list[compare.Pair], base: baselines.Baseline | None = None,
              clusters: list[grouping.Cluster] = (), threshold: float = grouping.THRESHOLD) -> str:
    base = base or baselines.Baseline(None)
    cluster_of = grouping.of_student(list(clusters))
    buf = io.StringIO()
    writer = csvsafe.Writer(buf)
    writer.writerow(["rank", "student_a", "student_b", "similarity", "files", "matched_tokens",
                     "cluster", "a_vs_reference", "b_vs_reference", "class_median"])
    for i, p in enumerate(pairs, start=1):
        files = "; ".join(f"{m.name} {m.share_a:.0%}/{m.share_b:.0%}" for m in p.files)
        cluster = cluster_of.get(p.a, "") if p.similarity >= threshold else ""
        writer.writerow([i, p.a, p.b, csvsafe.Number(f"{100 * p.similarity:.1f}"), files,
                         sum(m.overlap_a + m.overlap_b for m in p.files), cluster,
                         _percent(base.reference.get(p.a)), _percent(base.reference.get(p.b)),
                         _percent(base.class_median)])
    return buf.getvalue()


def write_report(layout: discover.Layout, asg, out: Path, *, top: int = TOP, stream=None,
                 threshold: float = grouping.THRESHOLD) -> list:
    """Compare every pair of ``layout``'s submissions; write pairs.csv and report.html in ``out``,
    with the class's baseline and the clusters linked at ``threshold`` (a fraction). The ranked
    pairs."""
    stream = stream if stream is not None else sys.stderr
    subs = [s for s in layout.submissions if s.problem is None]
    prints = compare.fingerprints(subs, asg)
    pairs = compare.rank(prints)
    base = baselines.measure(pairs, prints, asg)
    clusters = grouping.group(pairs, threshold)
    shown = [compare.compare_pair(p.a, p.b, prints[p.a], prints[p.b], keep_slices=True)
             for p in pairs[:top]]
    texts = {s.student: compare.code_files(s, compare.python_names(asg))
             for s in subs if s.student in {x for p in shown for x in (p.a, p.b)}}
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        from autograder.core.errors import UsageError
        raise UsageError(f"{out}: cannot create the output folder ({exc.strerror})") from None
    store.atomic_write(out / PAIRS, pairs_csv(pairs, base, clusters, threshold))
    store.atomic_write(out / REPORT, report_html.render(
        asg, shown, texts, students=len(subs), compared=len(prints), pairs_total=len(pairs),
        layout=layout.description, baseline=base, clusters=clusters, threshold=threshold))
    print(f"similarity: {len(prints)} of {len(layout.submissions)} submissions hold code beyond the "
          f"release; {len(pairs)} pairs compared; wrote {out / PAIRS} and {out / REPORT}", file=stream)
    def pct(x):
        return "none" if x is None else f"{100 * x:.0f}%"
    print(f"  baseline: median pair {pct(base.class_median)}; the reference against each student: "
          f"median {pct(base.reference_median)}", file=stream)
    for i, p in enumerate(pairs[:5], start=1):
        print(f"  {i}. {p.a} ~ {p.b}: {100 * p.similarity:.0f}%", file=stream)
    print(f"  {len(clusters)} cluster{'s' if len(clusters) != 1 else ''} linked at {100 * threshold:.0f}% "
          f"or more" + "".join(f"; {c.name}: {', '.join(c.students)}" for c in clusters), file=stream)
    return pairs

"""The similarity report of a class: OUT/pairs.csv (every pair, most similar first) and
OUT/report.html (the top pairs with their matching regions side by side).

pairs.csv columns: ``rank``, ``student_a``, ``student_b``, ``similarity`` (percent of both sides'
fingerprinted code that the other side has too, boilerplate excluded), ``files`` (per file both
hold: ``name a%/b%``), ``matched_tokens`` (filtered tokens in matching regions, both sides).
Spreadsheet-safe (autograder/reports/csvsafe.py): a student name that starts with a formula
character gets a quote in front.
"""
from __future__ import annotations

import io
import sys
from pathlib import Path

from autograder.batch import discover, store
from autograder.reports import csvsafe
from autograder.similarity import compare

PAIRS = "pairs.csv"
REPORT = "report.html"
#: Pairs shown with their code in report.html (all of them are in pairs.csv).
TOP = 25


def pairs_csv(pairs: list[compare.Pair]) -> str:
    buf = io.StringIO()
    writer = csvsafe.Writer(buf)
    writer.writerow(["rank", "student_a", "student_b", "similarity", "files", "matched_tokens"])
    for i, p in enumerate(pairs, start=1):
        files = "; ".join(f"{m.name} {m.share_a:.0%}/{m.share_b:.0%}" for m in p.files)
        writer.writerow([i, p.a, p.b, csvsafe.Number(f"{100 * p.similarity:.1f}"), files,
                         sum(m.overlap_a + m.overlap_b for m in p.files)])
    return buf.getvalue()


def write_report(layout: discover.Layout, asg, out: Path, *, top: int = TOP, stream=None) -> list:
    """Compare every pair of ``layout``'s submissions; write pairs.csv and report.html in ``out``.
    The ranked pairs."""
    from autograder.reports import similarity_html
    stream = stream if stream is not None else sys.stderr
    subs = [s for s in layout.submissions if s.problem is None]
    prints = compare.fingerprints(subs, asg)
    pairs = compare.rank(prints)
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
    store.atomic_write(out / PAIRS, pairs_csv(pairs))
    store.atomic_write(out / REPORT, similarity_html.render(
        asg, shown, texts, students=len(subs), compared=len(prints), pairs_total=len(pairs),
        layout=layout.description))
    print(f"similarity: {len(prints)} of {len(layout.submissions)} submissions hold code beyond the "
          f"release; {len(pairs)} pairs compared; wrote {out / PAIRS} and {out / REPORT}", file=stream)
    for i, p in enumerate(pairs[:5], start=1):
        print(f"  {i}. {p.a} ~ {p.b}: {100 * p.similarity:.0f}%", file=stream)
    return pairs

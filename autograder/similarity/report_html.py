"""OUT/report.html of ``similarity``: the class's baseline, the clusters, the most similar pairs
(each beside the baseline) and each file's matching regions side by side, as a self-contained page
(no network). It says first, plainly, that similarity is evidence for a human to look at, never a
verdict."""
from __future__ import annotations

from html import escape

from autograder.reports.feedback_html import page
from autograder.similarity import baseline as baselines
from autograder.similarity import clusters as grouping

CAVEAT = ("Similarity is evidence for a person to look at, not a verdict. A high score means two "
          "submissions share long stretches of code once names, strings and comments are set aside; "
          "it does not say who wrote what, or whether the students were allowed to work together. "
          "Short exercises solved from the same lesson share idioms, so read the matching regions "
          "side by side and talk to the students before deciding anything.")

EXTRA_STYLE = ("<style>.side{display:grid;grid-template-columns:1fr 1fr;gap:8px}"
               ".side pre{background:#fafbfc;border:1px solid #eceff3;padding:8px;overflow:auto;"
               "max-height:480px;font-size:12px}mark{background:#ffe08a}"
               ".caveat{border-left:4px solid #b3261e}.base{color:#555}</style>")


def _pct(x) -> str:
    return "none" if x is None else f"{100 * x:.0f}%"


def _baseline_card(baseline, threshold: float) -> str:
    ref = ("the course's reference solution has none of the files, so there is no reference baseline"
           if baseline.reference_median is None else
           f"the reference solution (written apart from every student) against each student: median "
           f"<b id=\"reference-median\">{_pct(baseline.reference_median)}</b>")
    return ("<div class=\"card\" id=\"baseline\"><h2>Baseline of this class</h2><p>Median pair: "
            f"<b id=\"class-median\">{_pct(baseline.class_median)}</b>; {ref}. Those are what students "
            "share without copying; read each pair against them. A pair is linked into a cluster at "
            f"<b>{100 * threshold:.0f}%</b> or more.</p></div>")


def _clusters_card(clusters, anchors: dict) -> str:
    if not clusters:
        return "<div class=\"card\" id=\"clusters\"><h2>Clusters</h2><p class=\"muted\">No pair is linked.</p></div>"
    rows = []
    for c in clusters:
        names = ", ".join(escape(s) for s in c.students)
        links = " ".join(f"<a href=\"#{a}\">{escape(label)}</a>" for label, a in anchors.get(c.name, []))
        rows.append(f"<tr><td>{c.name}</td><td>{len(c.students)}</td><td>{names}</td>"
                    f"<td>{_pct(c.lowest)} to {_pct(c.highest)}</td><td>{links}</td></tr>")
    return ("<div class=\"card\" id=\"clusters\"><h2>Clusters</h2><p class=\"muted\">Students linked by "
            "pairs at the threshold or more, directly or through one another: a copy shared by three "
            "students is one cluster of three.</p><table><tr><th>cluster</th><th>students</th>"
            f"<th>who</th><th>linked pairs</th><th>shown below</th></tr>{''.join(rows)}</table></div>")


def _highlighted(text: str, slices) -> str:
    """``text`` escaped, the matching character ranges in <mark>."""
    from copydetect.utils import highlight_overlap
    if slices is None or getattr(slices, "size", 0) == 0:
        return escape(text)
    marked, _share = highlight_overlap(text, slices, "<mark>", "</mark>", escape_html=True)
    return marked


def render(asg, pairs, texts: dict, *, students: int, compared: int, pairs_total: int,
           layout: str = "", baseline=None, clusters=(), threshold: float = 0.5) -> str:
    """The report of the ``pairs`` shown (compare.Pair with slices); ``texts``: student ->
    {file name: code}; ``students`` with something gradable, ``compared`` of them with code
    beyond the release, ``pairs_total`` pairs compared in all; ``baseline`` (baseline.Baseline),
    ``clusters`` (clusters.Cluster) linked at ``threshold`` (a fraction)."""
    baseline = baseline or baselines.Baseline(None)
    cluster_of = grouping.of_student(list(clusters))
    anchors: dict = {}
    rows, sections = [], []
    for i, p in enumerate(pairs, start=1):
        anchor = f"pair{i}"
        files = ", ".join(f"{m.name} {m.share_a:.0%}/{m.share_b:.0%}" for m in p.files) or "no match"
        cluster = cluster_of.get(p.a, "") if p.similarity >= threshold else ""
        if cluster:
            anchors.setdefault(cluster, []).append((f"#{i}", anchor))
        rows.append(f"<tr><td>{i}</td><td><a href=\"#{anchor}\">{escape(p.a)} ~ {escape(p.b)}</a></td>"
                    f"<td>{100 * p.similarity:.0f}%</td><td>{cluster}</td>"
                    f"<td class=\"base\">{_pct(baseline.class_median)}</td>"
                    f"<td class=\"base\">{_pct(baseline.reference.get(p.a))} / {_pct(baseline.reference.get(p.b))}</td>"
                    f"<td class=\"muted\">{escape(files)}</td></tr>")
        blocks = []
        for m in p.files:
            left = _highlighted(texts.get(p.a, {}).get(m.name, ""), m.slices_a)
            right = _highlighted(texts.get(p.b, {}).get(m.name, ""), m.slices_b)
            blocks.append(f"<h3>{escape(m.name)}: {m.share_a:.0%} of {escape(p.a)}'s, "
                          f"{m.share_b:.0%} of {escape(p.b)}'s</h3><div class=\"side\">"
                          f"<div><b>{escape(p.a)}</b><pre>{left}</pre></div>"
                          f"<div><b>{escape(p.b)}</b><pre>{right}</pre></div></div>")
        shown = "".join(blocks) or "<p class=muted>No matching region.</p>"
        sections.append(f"<div class=\"card\" id=\"{anchor}\"><h2>{i}. {escape(p.a)} ~ {escape(p.b)}: "
                        f"{100 * p.similarity:.0f}%{f' (cluster {cluster})' if cluster else ''}</h2>"
                        f"<p class=\"base\">Baseline: median pair {_pct(baseline.class_median)}; the "
                        f"reference against {escape(p.a)} {_pct(baseline.reference.get(p.a))}, against "
                        f"{escape(p.b)} {_pct(baseline.reference.get(p.b))}.</p>{shown}</div>")
    body = [
        EXTRA_STYLE,
        f"<h1>Similarity report: {escape(asg.name)}</h1>",
        f"<div class=\"card caveat\"><b>{escape(CAVEAT)}</b></div>",
        f"<p class=\"muted\">{students} submissions with something to grade ({escape(layout)}); "
        f"{compared} hold code beyond the release; {pairs_total} pairs compared file by file "
        "(bw.py with bw.py, ...). The release's stubs and public tests are boilerplate and never "
        "count, nor do the argument checks and return lines the stubs' docstrings dictate; names "
        "and strings are replaced before comparing, so renamed variables do not hide a copy. "
        "Marked: the regions the two files share. pairs.csv ranks every pair.</p>",
        _baseline_card(baseline, threshold),
        _clusters_card(clusters, anchors),
        "<h2>Most similar pairs</h2>",
        "<div class=\"card\"><table id=\"pairs\"><tr><th>#</th><th>pair</th><th>similarity</th><th>cluster</th>"
        "<th>median pair</th><th>each vs reference (a / b)</th><th>per file (a/b)</th></tr>"
        f"{''.join(rows)}</table></div>" if rows else "<div class=\"card muted\">No pairs to compare.</div>",
        *sections,
    ]
    return page(f"{asg.name} similarity report", "".join(body))

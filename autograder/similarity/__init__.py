"""Similarity between submissions: every pair compared file by file, for a human to look at.

- ``compare``: read each submission's code, drop the release's boilerplate (the generated stubs
  and the public tests), fingerprint with copydetect (tokens with names replaced, so renamed
  variables do not hide a copy; winnowed k-grams), and score every pair;
- ``baseline``: what the class shares without copying (the median pair, the reference against each student);
- ``clusters``: students linked by pairs at a threshold, directly or through one another;
- ``dictated``: the lines the stubs' docstrings dictate (argument checks, return lines), never counted;
- ``report_html``: report.html, the self-contained page;
- ``run``: the command's work: pairs.csv (ranked) and report.html.

Similarity is evidence, never a verdict: a short exercise solved from the same lesson shares
idioms, and a shared helper from the course is not copying.
"""

"""Similarity between submissions: every pair compared file by file, for a human to look at.

- ``compare``: read each submission's code, drop the release's boilerplate (the generated stubs
  and the public tests), fingerprint with copydetect (tokens with names replaced, so renamed
  variables do not hide a copy; winnowed k-grams), and score every pair;
- ``run``: the command's work: pairs.csv (ranked) and report.html (``reports/similarity_html``).

Similarity is evidence, never a verdict: a short exercise solved from the same lesson shares
idioms, and a shared helper from the course is not copying.
"""

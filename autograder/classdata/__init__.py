"""A class's data, as grade-all, the reports, the similarity report and the exports read it.

One module per concept:

- ``discover``: which input layout SUBMISSIONS_DIR is in (per-student folders or zips, nbgrader,
  a Gradescope export) and the ``Submission`` list found in it; ``lms``: the Moodle and Canvas
  downloads;
- ``store``: the output folder OUT: atomic per-student writes, content hashes, what is left to grade;
- ``overrides``: OUT/overrides.csv, the scores a person gives, applied on every run;
- ``regrades``: OUT/regrades.csv, every change a run made to a stored result, and why;
- ``zero``: results for a submission that was not graded (a zero with a reason, a grader failure);
- ``partial``: a grading of some checks only, merged into the student's full result.

It imports only autograder/core: every package above it (batch, reports, similarity, exports)
may use it without importing one another.
"""

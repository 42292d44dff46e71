"""Grading a whole class: ``python -m autograder grade-all SUBMISSIONS_DIR --out OUT``.

grade-all is four steps, one module each, run in order by ``run`` (``grade_all``):

- ``options``: the command line's flags (``BatchOptions``), settled against course.yml and checked;
- ``plan``: who is graded this run and under which grading key (``fingerprint``: the grader's
  check code, part of the key); damaged student folders healed;
- ``executors``: where the grading runs (``base``: the interface; ``local``: worker processes on
  this machine; ``slurm``: one job array); ``worker``: the worker process (imports the grader once,
  grades one submission at a time); ``progress``: the progress bar;
- ``record``: each outcome saved in OUT the moment it arrives (``submitted``: when a submission was
  handed in, for the late verdict);
- ``class_files``: gradebook.csv, canvas.csv, checks.csv, partial.csv, summary.json and
  summary.html (``exports``: an export edited by hand is moved aside; ``extensions``:
  OUT/extensions.csv).

The class's data (the submissions found, OUT's store, overrides, regrades, zeros, partial results)
is autograder/classdata/; the pages and CSV files themselves are autograder/reports/.
"""

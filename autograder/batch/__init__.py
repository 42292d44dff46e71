"""Grading a whole class: ``python -m autograder grade-all SUBMISSIONS_DIR --out OUT``.

One module per concept:

- ``discover``: which input layout was found (per-student folders or zips, nbgrader, a Gradescope
  export) and the list of submissions in it;
- ``store``: the output folder: atomic per-student writes, content hashes, what is left to grade;
- ``pool``: N worker processes, a watchdog per submission, the progress bar;
- ``worker``: the worker process (imports the grader once, grades one submission at a time);
- ``gradebook``, ``summary``: the class-level outputs (CSV, JSON);
- ``mistakes``: failing check ids mapped to the lesson's classic mistakes (``mistakes.yml``);
- ``svg``, ``plotdata``, ``feedback_html``, ``summary_html``: the self-contained HTML pages.
"""

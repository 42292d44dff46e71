"""The hidden checks, one module per concept; importing this package registers them all.

Two declarations the engine reads (autograder/core/grade.py):

- ``DEPENDS``: student module -> the student modules its checks also run. roofline.py imports
  predict.py, so when the student's predict.py is missing, does not import or failed its own
  checks, roofline.py is graded with ``standin/predict.py`` (the public stub's formulas, never the
  reference; autograder/core/fallback.py): a slip in predict.py is charged in task3 only.
- ``HANDED_IN``: files the student hands in besides the modules course.yml names; with them the
  grader finds the student's folder inside a submission zipped one or more folders too deep.
"""

DEPENDS = {"roofline": ("predict",)}
HANDED_IN = ("measurements.json", "why17.ipynb")

"""The hidden checks, one module per concept; importing this package registers them all.

One declaration the engine reads (autograder/grading/grade.py):

- ``DEPENDS``: student module -> the student modules its checks also run. roofline.py imports
  predict.py, so when the student's predict.py is missing, does not import or failed its own
  checks, roofline.py is graded with ``standin/predict.py`` (the public stub's formulas, never the
  reference; autograder/grading/fallback.py): a slip in predict.py is charged in task3 only.

The files a submission holds besides the modules (measurements.json, why17.ipynb) are course.yml's
task ``files``, read by the grader and by ``python -m shared.submit`` alike.
"""

DEPENDS = {"roofline": ("predict",)}

"""The lesson "Why ~17 tokens per second?" as the grader sees it: everything of this assignment
that the engine does not know.

    checks/          the hidden checks, one module per concept (``gpu_*`` modules run on the
                     simulated GPU beside the reference)
    domain.py        the objects a law's case is made of (machine, model, decode setting)
    cases.py         the laws' table of cases, law_cases.json, which the property checks grade on
    strategies.py    hypothesis strategies the table is drawn from (draw.py) and the tests hunt with
    measurements.py  the schema of measurements.json (the Measure table the notebook writes)
    mistakes.yml     the lesson's classic mistakes and the checks that reveal them (class summary)
    plotdata.py      the numbers behind a student's feedback plots; charts.py draws them
    fixtures/        submissions that prove every check: wrong, good in other styles, hostile, attacks

course.yml names this package as the assignment's ``grader``.
"""

#: Student files that import torch: a child grading them preloads it.
TORCH_FILES = ("bw", "flops")
#: Student files that draw with matplotlib: a child grading them preloads it.
PLOT_FILES = ("roofline",)

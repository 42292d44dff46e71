"""The lesson "Why ~17 tokens per second?" as the grader sees it: everything of this assignment
that the engine does not know.

    checks/          the hidden checks, one module per concept (gpu.py's run on the simulated
                     GPU beside the reference)
    domain.py        the objects a law's case is made of (machine, model, decode setting)
    cases.py         the laws' table of cases, law_cases.json, which the property checks grade on
    strategies.py    hypothesis strategies the table is drawn from (draw.py) and the tests hunt with
    measurements.py  the schema of measurements.json (the Measure table the notebook writes)
    mistakes.yml     the lesson's classic mistakes and the checks that reveal them (class summary)
    plotdata.py      the numbers behind a student's feedback plots; charts.py draws them
    fixtures/        submissions that prove every check: wrong, good in other styles, hostile, attacks

course.yml names this package as the assignment's ``grader``.
"""

# autograder.api exports Lesson too; core's module is imported here because it is light: the
# engine reads LESSON before it starts the fork server, and grade-all's parent never imports the checks.
from autograder.core.lesson import Lesson

#: What the engine asks of this package (autograder/core/lesson.py), checked when it loads.
LESSON = Lesson(
    package=__name__,
    checks=f"{__name__}.checks",
    # Student files that import torch, and those that draw with matplotlib: their children preload them.
    torch_files=("bw", "flops"),
    plot_files=("roofline",),
    # What a fork server imports once, in this order, before it forks this lesson's children: numpy
    # and torch (bw.py and flops.py import torch), yaml, then the simulated GPU's modules: all of
    # them, since the child of a torch file imports each before the student's code runs
    # (shared.simgpu's ``conceal``), so their code runs once per server, not once per child
    # (sandboxed children may not write bytecode; docs/performance.md has what it saves).
    server_preload=("numpy", "torch", "yaml", "shared.simgpu.*", "shared.devices", "shared.validate"),
    # What it imports after it is ready, while no request waits: the first children (bw.py,
    # flops.py) need torch only, so a cold grading does not wait for matplotlib, and the children
    # forked later (roofline.py) find it imported.
    server_later=("matplotlib", "matplotlib.pyplot"),
    # roofline.py imports predict.py: when the student's predict.py is missing, does not import or
    # failed its own checks, roofline.py is graded with standin/predict.py (the public stub's
    # formulas, never the reference; autograder/grading/fallback.py), so a slip in predict.py is
    # charged in task3 only.
    depends={"roofline": ("predict",)},
    mistakes="mistakes.yml",
    plots=f"{__name__}.plotdata",
    charts=f"{__name__}.charts",
    realgpu=f"{__name__}.realgpu",
    calibrate=f"{__name__}.calibrate",
    # Besides this package and the reference: the GPU checks' rubric and simulator, the tables the
    # oracles and the Measure table read.
    deciding=("shared.lessons.why17", "shared.simgpu", "shared.tables", "shared.data", "shared.validate"),
)

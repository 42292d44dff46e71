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
#: What a fork server imports once, in this order, before it forks this lesson's children: numpy
#: and torch (bw.py and flops.py import torch), yaml, then the simulated GPU's modules that the
#: child of a torch file installs, so their code is compiled once per server, not once per child
#: (sandboxed children may not write bytecode).
SERVER_PRELOAD = ("numpy", "torch", "yaml", "shared.simgpu.patches", "shared.simgpu.mode",
                  "shared.simgpu.frontend", "shared.simgpu.device", "shared.devices", "shared.validate")
#: What it imports after it is ready, while no request waits: the first children (bw.py, flops.py)
#: need torch only, so a cold grading does not wait for matplotlib, and the children forked later
#: (roofline.py) find it imported.
SERVER_LATER = ("matplotlib", "matplotlib.pyplot")

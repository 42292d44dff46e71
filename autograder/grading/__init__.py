"""Grading one submission: the layer above the sandbox and the simulated GPU.

    grade.py      grade_submission: plan, open the sandboxes, run every check in its child, finish
    schedule.py   the order the checks run in: torch-free tasks first, while the fork server imports;
                  what that server imports for the checks asked
    context.py    what a check sees: the student's and the reference's calls, within the budget
    reference.py  the reference solution's sandbox, kept between gradings of one run
    fallback.py   a stand-in for a broken module that another one needs (never the reference)
    real_gpu.py   the real-GPU tier of ``--device cuda`` (a lesson's realgpu.py, two children)

It imports ``core``, ``sandbox`` and ``gpu``; nothing below it imports it (pyproject.toml's
import-linter contracts).
"""

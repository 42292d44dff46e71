"""``grade SUBMISSION``: grade one folder or .zip into a Gradescope results.json.

One straight path, on the course the command line loaded once (``args.course``): intake (when
the platform says it was handed in, read before any grading), plan (the course fit to grade
with: autograder/grading/preflight.py, while the fork server imports torch), run
(``grade_submission``), report (the late policy, results.json, the summary).
"""
from __future__ import annotations

import sys

from autograder.core import course, late, lesson, platform_time, results
from autograder.core.errors import GraderError
from autograder.grading import preflight
from autograder.grading.grade import grade_submission

NAME = "grade"
HELP = "grade one submission (a folder or a .zip) and write Gradescope's results.json"


def add_arguments(p) -> None:
    p.add_argument("submission", help="a submission folder or .zip")
    p.add_argument("--assignment", default=None, help="an assignment in course.yml (default: its first)")
    p.add_argument("--device", choices=course.DEVICES, default=None,
                   help="where checks run: sim or cpu (CPU checks + simulated GPU), cuda (adds real-GPU checks); "
                        "default from course.yml")
    p.add_argument("--out", default="results.json", help="results file to write (default ./results.json)")
    p.add_argument("--submission-metadata", default=None, metavar="FILE",
                   help="Gradescope's submission_metadata.json as its harness writes it (outside the "
                        "submission): its created_at dates the submission for course.yml's late policy, "
                        "and its due date and a student's extension there replace course.yml's due")


def run(args) -> int:
    asg = args.course.assignment(args.assignment)
    # intake: read before grading (a bad metadata file is one line, not a grading thrown away), and
    # only when a late policy needs it: without one, Gradescope's file is not this grader's business.
    # Gradescope's own due date and a submitter's extension there replace course.yml's.
    dated = (platform_time.gradescope_policy(args.submission_metadata, asg.late)
             if args.submission_metadata and asg.late is not None else None)
    try:
        res = _graded(args, asg)
    except GraderError as exc:   # no results.json: a grader failure must never read as a score
        print(f"error: the grader failed, not the submission: {exc}; no results written", file=sys.stderr)
        return 1
    if dated is not None:
        policy, extension, when = dated
        res = late.apply(res, policy, when.when, when.source, extension)
    path = results.write(res, args.out)
    print(results.summary(res, {t.id: t.title for t in asg.tasks}))
    print(f"wrote {path}")
    return 0


def _graded(args, asg: course.Assignment) -> dict:
    """Plan and run: the results of grading ``args.submission``.

    Several children start per submission (one per student file, and the reference): they fork
    from one server that imports torch once, started first, while this process checks the
    course and loads the checks. For one grading's handful of forks, huge pages would cost more
    than they save; and the Lesson's server_later (matplotlib) is not worth importing there: the
    plot file's checks run while the server still imports torch, in a child that imports
    matplotlib itself.
    """
    from autograder.sandbox import forkserver
    forkserver.start(preload=lesson.server_imports(asg)["preload"], wait=False, huge_pages=False, later=())
    try:
        preflight.check(args.course, asg)
        return grade_submission(args.submission, asg, args.device)
    finally:
        forkserver.stop()

"""``calibrate [--device cuda|sim]``: the reference against the spec and every GPU-check
submission through every check, as one table of ratios and verdicts (the assignment's grader
package's calibrate.py: autograder/core/lesson.py)."""
from __future__ import annotations

from autograder.core.errors import UsageError

NAME = "calibrate"
HELP = ("measure the reference against the GPU's spec and run every fixtures/gpu submission of the assignment's "
        "grader package "
        "through every GPU check: one table of ratios and verdicts (--device sim: on the simulated GPU)")


def add_arguments(p) -> None:
    p.add_argument("--device", choices=("cuda", "sim"), default="cuda",
                   help="cuda: this machine's GPU, at most 5 minutes (default); sim: the simulated GPU")
    p.add_argument("--profile", default=None,
                   help="simulated profile with --device sim (default: course.yml's sim_profile)")
    p.add_argument("--assignment", default=None, help="the assignment to calibrate (default: the first in course.yml)")


def run(args) -> int:
    # Imported here: the simulator pulls in torch, which no other command's start-up should pay.
    from autograder.core import lesson
    from autograder.grading import real_gpu as realgpu

    asg = args.course.assignment(args.assignment)
    calibrate = lesson.calibration_of(asg)
    if calibrate is None:
        raise UsageError(f"calibrate: assignment {asg.name} has no calibration (no calibrate.py in {asg.grader})")
    if args.device == "sim":
        profile = args.profile or asg.sim_profile
        try:
            calibrate.tables.device(profile)
        except (KeyError, ValueError) as exc:
            raise UsageError(f"--profile: {exc}") from None
        device_line, spec, rows = calibrate.calibrate_sim(asg.solutions_dir, profile)
    else:
        if args.profile:
            raise UsageError("--profile applies to --device sim only")
        reason = realgpu.probe()
        if reason:
            raise UsageError("calibrate --device cuda: no CUDA GPU on this machine "
                             "(torch.cuda.is_available() is False); calibrate --device sim prints the "
                             "table on the simulated GPU")
        device_line, spec, rows = calibrate.calibrate_cuda(asg.solutions_dir)
    print(calibrate.format_table(device_line, spec, rows))
    return 1 if any(r.problems() for r in rows) else 0

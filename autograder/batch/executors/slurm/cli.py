"""grade-all's executor options: ``--executor local|slurm`` and the cluster's resources.

autograder/commands/grade_all.py calls :func:`add_arguments` on its parser and passes
:func:`executor_from` to grade-all (autograder/batch/executors/base.py: an ExecutorFactory).
"""
from __future__ import annotations

import argparse
import functools

from autograder.batch.executors.base import ExecutorFactory
from autograder.batch.executors.local import LocalExecutor
from autograder.core.errors import UsageError

#: dest -> the flag, for the options that only mean something on a cluster.
SLURM_ONLY = {"partition": "--partition", "account": "--account", "gpus_per_task": "--gpus-per-task",
              "array_parallelism": "--array-parallelism", "time_limit_min": "--time-limit",
              "students_per_task": "--students-per-task", "sbatch_args": "--sbatch-arg"}


def _whole(low: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, got {text!r}")
        return value
    return parse


def add_arguments(p) -> None:
    g = p.add_argument_group("grading on a Slurm cluster (--executor slurm; see docs/slurm.md)")
    g.add_argument("--executor", choices=("local", "slurm"), default="local",
                   help="local: worker processes on this machine (default); slurm: one job array, "
                        "each task grading a slice of the class into OUT (a shared filesystem)")
    g.add_argument("--partition", metavar="P", help="Slurm partition (default: the cluster's)")
    g.add_argument("--account", metavar="A", help="Slurm account to charge")
    g.add_argument("--gpus-per-task", type=_whole(0), metavar="N",
                   help="GPUs per array task, for the real-GPU checks (default: 0)")
    g.add_argument("--array-parallelism", type=_whole(1), metavar="N",
                   help="at most N array tasks at once (default: as many as the cluster gives)")
    g.add_argument("--time-limit", dest="time_limit_min", type=_whole(1), metavar="MIN",
                   help="wall-clock limit of one array task, minutes (default: the partition's)")
    g.add_argument("--students-per-task", type=_whole(1), metavar="N",
                   help="submissions per array task (default: 10); with --executor slurm, "
                        "--jobs is the worker processes (and CPUs) of one task (default: 1)")
    g.add_argument("--sbatch-arg", dest="sbatch_args", action="append", metavar="--OPT=VALUE",
                   help="one more sbatch option, e.g. --sbatch-arg=--qos=short (repeatable)")


def executor_from(args) -> ExecutorFactory:
    """The executor grade-all should build: LocalExecutor, or a SlurmExecutor with the cluster
    options of ``args`` (validated now, before OUT is touched)."""
    if args.executor != "slurm":
        given = [flag for dest, flag in SLURM_ONLY.items() if getattr(args, dest, None) is not None]
        if given:
            raise UsageError(f"{given[0]}: only with --executor slurm")
        return LocalExecutor
    from autograder.batch.executors.slurm.executor import SlurmExecutor
    from autograder.batch.executors.slurm.options import SlurmOptions
    chosen = {dest: getattr(args, dest) for dest in SLURM_ONLY if getattr(args, dest, None) is not None}
    if "sbatch_args" in chosen:
        chosen["sbatch_args"] = tuple(chosen["sbatch_args"])
    return functools.partial(SlurmExecutor, SlurmOptions(workers=args.jobs or 1, **chosen))

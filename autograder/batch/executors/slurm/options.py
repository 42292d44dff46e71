"""What the instructor asks of the cluster, checked, and turned into ``sbatch`` arguments.

Every value is validated here, so a typo is one line naming the option, not a job script that
Slurm rejects (or worse, one that means something else).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from autograder.core.errors import UsageError

#: Slurm names (partition, account, qos): letters, digits and ``_ . -``; a comma lists several.
_NAME = re.compile(r"[A-Za-z0-9_.-]+(,[A-Za-z0-9_.-]+)*")
#: ``--sbatch-arg`` values: one long option, ``--name`` or ``--name=value``, no spaces or newlines.
_SBATCH_ARG = re.compile(r"--[A-Za-z][A-Za-z0-9-]*(=[^\s]+)?")
#: Options the executor sets itself; passing them through --sbatch-arg would break the array.
_RESERVED = ("--array", "--output", "--error", "--parsable", "--wrap", "--job-name", "--chdir",
             "--open-mode", "--cpus-per-task", "--partition", "--account", "--gpus-per-task",
             "--time")
JOB_NAME = "grade-all"


@dataclass(frozen=True)
class SlurmOptions:
    """The job array's resources.

    ``students_per_task``: submissions graded by one array task (a slice of the class);
    ``workers``: grading processes inside one task, and the CPUs it asks for (--cpus-per-task);
    ``gpus_per_task``: GPUs per array task (0: none; the graded checks run on the simulated GPU);
    ``array_parallelism``: at most this many tasks run at once (None: as many as the cluster allows);
    ``time_limit_min``: wall-clock limit of one task in minutes (None: the partition's default);
    ``sbatch_args``: further sbatch long options, passed through (``--qos=short``, ``--mem=8G``).
    """

    partition: str | None = None
    account: str | None = None
    gpus_per_task: int = 0
    array_parallelism: int | None = None
    time_limit_min: int | None = None
    students_per_task: int = 10
    workers: int = 1
    sbatch_args: tuple[str, ...] = ()

    def __post_init__(self):
        for flag, value in (("--partition", self.partition), ("--account", self.account)):
            if value is not None and not _NAME.fullmatch(value):
                raise UsageError(f"{flag} {value!r}: not a Slurm name (letters, digits, _ . - and commas)")
        for flag, value, low in (("--gpus-per-task", self.gpus_per_task, 0),
                                 ("--array-parallelism", self.array_parallelism, 1),
                                 ("--time-limit", self.time_limit_min, 1),
                                 ("--students-per-task", self.students_per_task, 1),
                                 ("--jobs", self.workers, 1)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < low):
                raise UsageError(f"{flag} {value!r}: must be a whole number >= {low}")
        for arg in self.sbatch_args:
            if not _SBATCH_ARG.fullmatch(arg):
                raise UsageError(f"--sbatch-arg {arg!r}: give one long option such as --qos=short, "
                                 "without spaces")
            if arg.split("=", 1)[0] in _RESERVED:
                raise UsageError(f"--sbatch-arg {arg!r}: set by grade-all itself; "
                                 "use its own option instead")

    def sbatch_argv(self, n_tasks: int, log_pattern: str) -> list[str]:
        """The sbatch options for an array of ``n_tasks`` tasks writing logs to ``log_pattern``
        (``%a`` is the task id)."""
        if n_tasks < 1:
            raise ValueError(f"n_tasks must be >= 1, got {n_tasks}")
        array = f"0-{n_tasks - 1}"
        if self.array_parallelism is not None:
            array += f"%{self.array_parallelism}"
        argv = ["--parsable", f"--job-name={JOB_NAME}", f"--array={array}",
                f"--output={log_pattern}", "--open-mode=append",
                f"--cpus-per-task={self.workers}"]
        if self.partition:
            argv.append(f"--partition={self.partition}")
        if self.account:
            argv.append(f"--account={self.account}")
        if self.gpus_per_task:
            argv.append(f"--gpus-per-task={self.gpus_per_task}")
        if self.time_limit_min is not None:
            argv.append(f"--time={self.time_limit_min}")
        argv.extend(self.sbatch_args)
        return argv

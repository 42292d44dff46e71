"""autograder/batch/executors/slurm/options.py: the instructor's cluster options, validated, as sbatch arguments."""
from __future__ import annotations

import pytest

from autograder.batch.executors.slurm.options import SlurmOptions
from autograder.core.errors import UsageError


def test_defaults_ask_for_an_array_of_one_cpu_tasks_without_gpus():
    argv = SlurmOptions().sbatch_argv(4, "/out/.slurm/r/task-%a.log")
    assert "--array=0-3" in argv
    assert "--cpus-per-task=1" in argv
    assert "--output=/out/.slurm/r/task-%a.log" in argv
    assert "--parsable" in argv
    assert not [a for a in argv if a.startswith(("--gpus", "--partition", "--account", "--time"))]


def test_every_cluster_option_reaches_sbatch():
    opts = SlurmOptions(partition="gpu-a100", account="cs336", gpus_per_task=1, array_parallelism=8,
                        time_limit_min=30, workers=2, sbatch_args=("--qos=short", "--mem=8G"))
    argv = opts.sbatch_argv(30, "log-%a")
    for expected in ("--array=0-29%8", "--partition=gpu-a100", "--account=cs336",
                     "--gpus-per-task=1", "--time=30", "--cpus-per-task=2", "--qos=short", "--mem=8G"):
        assert expected in argv


@pytest.mark.parametrize("kwargs, named", [
    ({"partition": "gpu\n#SBATCH --wrap=rm"}, "--partition"),
    ({"account": "my account"}, "--account"),
    ({"gpus_per_task": -1}, "--gpus-per-task"),
    ({"array_parallelism": 0}, "--array-parallelism"),
    ({"time_limit_min": 0}, "--time-limit"),
    ({"students_per_task": 0}, "--students-per-task"),
    ({"workers": 0}, "--jobs"),
    ({"sbatch_args": ("--array=0-99",)}, "--sbatch-arg"),
    ({"sbatch_args": ("--qos=short --wrap=x",)}, "--sbatch-arg"),
    ({"sbatch_args": ("qos=short",)}, "--sbatch-arg"),
])
def test_a_bad_option_is_one_line_naming_it(kwargs, named):
    with pytest.raises(UsageError) as info:
        SlurmOptions(**kwargs)
    message = str(info.value)
    assert message.startswith(named) and "\n" not in message


def test_an_empty_array_is_refused():
    with pytest.raises(ValueError, match="n_tasks"):
        SlurmOptions().sbatch_argv(0, "log")

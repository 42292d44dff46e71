"""Grading a class on a Slurm cluster: ``grade-all ... --executor slurm``.

The work is one Slurm job array; each array task grades a slice of the class into the same OUT
folder through the batch store (atomic per-student writes, content hashes), so resume, gradebook
and summary are the local executor's own. One module per concept:

- ``options``: what the instructor asks of the cluster (partition, account, GPUs, time limit...);
- ``plan``: the slices of the class and the manifest the array tasks read;
- ``queue``: sbatch, squeue, sacct and scancel, and their job states in four words;
- ``task``: the array task itself (``python -m autograder.batch.executors.slurm.task MANIFEST``), run on a node;
- ``executor``: the submitting side: plan, submit, follow the array with the progress bar, collect.
"""

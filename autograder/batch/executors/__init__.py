"""Where grade-all's submissions are graded: ``base`` (the Executor interface, Job and Outcome),
``local`` (worker processes on this machine, the default) and ``slurm`` (one Slurm job array)."""

"""autograder/batch/executors/slurm/queue.py: job states in four words, read from a real single-node cluster."""
from __future__ import annotations

import time

import pytest

from autograder.batch.executors.slurm import queue
from tests.batch.slurm.fixtures import slurm_cluster  # noqa: F401 - fixture

POLL_S = 0.5
WAIT_S = 120.0


@pytest.mark.parametrize("state, word", [
    ("PENDING", queue.PENDING), ("REQUEUED", queue.PENDING), ("RUNNING", queue.RUNNING),
    ("COMPLETING", queue.RUNNING), ("COMPLETED", queue.DONE), ("FAILED", queue.FAILED),
    ("CANCELLED by 0", queue.FAILED), ("TIMEOUT", queue.FAILED), ("NODE_FAIL", queue.FAILED),
    ("PREEMPTED", queue.FAILED), ("OUT_OF_MEMORY", queue.FAILED), ("", queue.GONE),
])
def test_each_slurm_state_has_its_word(state, word):
    assert queue.category(state) == word


def test_array_ids_in_squeue_and_sacct_notation_are_expanded():
    text = "7_0|COMPLETED\n7_[2-4,6%2]|PENDING\n8_1|RUNNING\n7|PENDING\n7_1|RUNNING\n"
    assert queue._parse(text, "7") == {0: "COMPLETED", 1: "RUNNING", 2: "PENDING", 3: "PENDING",
                                       4: "PENDING", 6: "PENDING"}


def _wait_until_ended(job_id: str, n: int) -> dict[int, str]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        states = queue.task_states(job_id)
        if len(states) == n and all(queue.category(s) in (queue.DONE, queue.FAILED)
                                    for s in states.values()):
            return states
        time.sleep(POLL_S)
    raise AssertionError(f"array {job_id} did not end within {WAIT_S:.0f} s: {states}")


@pytest.mark.slow
def test_done_failed_and_cancelled_tasks_are_told_apart(slurm_cluster, tmp_path):
    script = tmp_path / "job.sh"
    # task 0 succeeds, task 1 exits 3, task 2 would run for ten minutes until cancelled
    script.write_text('#!/bin/bash\ncase "$SLURM_ARRAY_TASK_ID" in 0) exit 0;; 1) exit 3;; '
                      '*) sleep 600;; esac\n')
    job = queue.submit(str(script), ["--parsable", "--array=0-2", f"--output={tmp_path}/%a.log"])
    deadline = time.monotonic() + WAIT_S
    while queue.category(queue.task_states(job).get(2, "")) != queue.RUNNING:
        assert time.monotonic() < deadline, "task 2 never started"
        time.sleep(POLL_S)
    queue.cancel(job, task=2)
    states = _wait_until_ended(job, 3)
    assert [queue.category(states[i]) for i in range(3)] == [queue.DONE, queue.FAILED, queue.FAILED]
    assert states[2].startswith("CANCELLED")


@pytest.mark.slow
def test_a_rejected_submission_is_one_line_naming_sbatch(slurm_cluster, tmp_path):
    script = tmp_path / "job.sh"
    script.write_text("#!/bin/bash\ntrue\n")
    with pytest.raises(queue.SlurmError) as info:
        queue.submit(str(script), ["--parsable", "--partition=no-such-partition"])
    assert str(info.value).startswith("sbatch failed") and "\n" not in str(info.value)
    assert "partition" in str(info.value).lower()

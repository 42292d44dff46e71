"""Talking to Slurm: sbatch, squeue, sacct and scancel, and their job states in four words.

Slurm has two dozen job states; the progress bar needs four: ``pending`` (waiting for a node),
``running``, ``done`` (exited 0) and ``failed`` (exited non-zero, cancelled, timed out, node
failure, preempted, out of memory...). squeue knows a job while it runs and for MinJobAge seconds
after (300 by default); sacct knows it afterwards where the cluster keeps accounting. A task that
neither knows any more is ``gone``: the results on disk say what it finished.
"""
from __future__ import annotations

import re
import shutil
import subprocess

from autograder.core.errors import UsageError

PENDING, RUNNING, DONE, FAILED, GONE = "pending", "running", "done", "failed", "gone"
#: Slurm state (first word, as squeue %T and sacct State print it) -> one of the four words.
STATES = {
    **dict.fromkeys(("PENDING", "REQUEUED", "REQUEUE_HOLD", "REQUEUE_FED", "RESV_DEL_HOLD",
                     "SUSPENDED", "RESIZING"), PENDING),
    **dict.fromkeys(("RUNNING", "CONFIGURING", "COMPLETING", "STAGE_OUT", "SIGNALING",
                     "STOPPED"), RUNNING),
    "COMPLETED": DONE,
    **dict.fromkeys(("FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "PREEMPTED", "BOOT_FAIL",
                     "DEADLINE", "OUT_OF_MEMORY", "SPECIAL_EXIT", "REVOKED"), FAILED),
}
#: Seconds to wait for one Slurm command (a client with a bad slurm.conf retries for a minute).
COMMAND_TIMEOUT_S = 60.0
_ARRAY_ID = re.compile(r"^(\d+)_(\d+|\[[^\]]*\])$")


class SlurmError(UsageError):
    """A Slurm command failed or is missing; the message is its one-line reason."""


def category(state: str) -> str:
    """The four-word category of a Slurm state such as ``CANCELLED by 0`` or ``RUNNING``."""
    word = state.split()[0].rstrip("+") if state.strip() else ""
    return STATES.get(word, RUNNING if word else GONE)


def _run(argv: list[str], *, check: bool = True) -> subprocess.CompletedProcess:
    exe = shutil.which(argv[0])
    if exe is None:
        raise SlurmError(f"{argv[0]}: not found on PATH; --executor slurm needs the Slurm client "
                         "commands (sbatch, squeue, scancel) on the submitting host")
    try:
        proc = subprocess.run([exe, *argv[1:]], capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        raise SlurmError(f"{argv[0]}: no answer from the cluster within {COMMAND_TIMEOUT_S:.0f} s "
                         "(is slurmctld reachable? is SLURM_CONF right?)") from None
    if check and proc.returncode != 0:
        lines = [ln for ln in (proc.stderr or proc.stdout).splitlines() if ln.strip()]
        raise SlurmError(f"{argv[0]} failed (exit {proc.returncode}): "
                         f"{lines[-1].strip() if lines else 'no message'}")
    return proc


def submit(script: str, options: list[str]) -> str:
    """Submit ``script`` with sbatch ``options`` (which include --parsable); return the job id."""
    out = _run(["sbatch", *options, script]).stdout.strip()
    job_id = out.split(";")[0]  # --parsable prints "id" or "id;cluster"
    if not job_id.isdigit():
        raise SlurmError(f"sbatch printed {out!r}, not a job id")
    return job_id


def _task_ids(spec: str) -> list[int]:
    """Task ids in ``3``, ``[0-4]``, ``[1,3-5%2]``."""
    spec = spec.strip("[]").split("%")[0]
    ids: list[int] = []
    for part in filter(None, spec.split(",")):
        lo, _, hi = part.partition("-")
        ids.extend(range(int(lo), int(hi or lo) + 1))
    return ids


def _parse(lines: str, job_id: str) -> dict[int, str]:
    states: dict[int, str] = {}
    for line in lines.splitlines():
        ident, _, state = line.strip().partition("|")
        m = _ARRAY_ID.match(ident)
        if not m or m.group(1) != job_id or not state:
            continue
        for task in _task_ids(m.group(2)):
            states[task] = state.strip()
    return states


def task_states(job_id: str) -> dict[int, str]:
    """Slurm state of each task of array ``job_id`` that squeue or sacct still knows.

    Raises SlurmError when squeue cannot answer (controller unreachable), not when it has simply
    forgotten the job."""
    proc = _run(["squeue", "-h", "-r", "--states=all", "-j", job_id, "-o", "%i|%T"], check=False)
    if proc.returncode != 0 and "invalid job id" not in proc.stderr.lower():
        lines = [ln for ln in proc.stderr.splitlines() if ln.strip()]
        raise SlurmError(f"squeue failed (exit {proc.returncode}): "
                         f"{lines[-1].strip() if lines else 'no message'}")
    states = _parse(proc.stdout, job_id) if proc.returncode == 0 else {}
    if shutil.which("sacct"):
        acct = _run(["sacct", "-n", "-P", "-X", "-j", job_id, "-o", "JobID,State"], check=False)
        if acct.returncode == 0:  # fails where the cluster keeps no accounting; squeue is enough
            for task, state in _parse(acct.stdout, job_id).items():
                states.setdefault(task, state)
    return states


def cancel(job_id: str, task: int | None = None) -> None:
    """Cancel the whole array, or one of its tasks."""
    _run(["scancel", job_id if task is None else f"{job_id}_{task}"])

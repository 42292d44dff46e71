"""A single-node Slurm cluster on this machine, for tests: munged, slurmctld and slurmd in a temp dir.

Debian's packages (``apt-get install slurmctld slurmd slurm-client munge``; .ci/run installs them).
Everything the daemons write (munge key and socket, slurm.conf, state, spool, logs) lives in one
folder; the daemons run in the foreground as children of this process and are stopped by their
process ids. Clients (sbatch, squeue, scancel) find the cluster through ``SLURM_CONF``, which
:meth:`Cluster.env` returns.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import time
from pathlib import Path

DAEMONS = ("munged", "slurmctld", "slurmd")
CLIENTS = ("sbatch", "squeue", "scancel", "sinfo")
PARTITION = "debug"
NODE = "localhost"
START_TIMEOUT_S = 60.0


class ClusterUnavailable(RuntimeError):
    """Slurm cannot run here (binaries missing, not root); the message says which and why."""


def missing_binaries() -> list[str]:
    """The daemons and clients that are not on PATH (or /usr/sbin)."""
    path = os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin"
    return [b for b in DAEMONS + CLIENTS if shutil.which(b, path=path) is None]


def _which(name: str) -> str:
    return shutil.which(name, path=os.environ.get("PATH", "") + os.pathsep + "/usr/sbin:/sbin")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _node_resources() -> tuple[int, int]:
    """(CPUs, RealMemory in MB) as slurmd itself sees this machine (``slurmd -C``)."""
    out = subprocess.run([_which("slurmd"), "-C"], capture_output=True, text=True, timeout=30).stdout
    cpus = re.search(r"\bCPUs=(\d+)", out)
    mem = re.search(r"\bRealMemory=(\d+)", out)
    if not cpus or not mem:
        raise ClusterUnavailable(f"slurmd -C did not report CPUs and RealMemory: {out.strip()!r}")
    return int(cpus.group(1)), int(mem.group(1))


class Cluster:
    """One slurmctld + one slurmd (node ``localhost``, partition ``debug``) + munged, in ``root``."""

    def __init__(self, root: Path):
        self.root = Path(root)
        self.conf = self.root / "slurm.conf"
        self.procs: dict[str, subprocess.Popen] = {}

    def env(self) -> dict[str, str]:
        """The environment for Slurm clients: os.environ plus SLURM_CONF pointing at this cluster."""
        return {**os.environ, "SLURM_CONF": str(self.conf)}

    # -- start -------------------------------------------------------------------------------------
    def start(self) -> "Cluster":
        missing = missing_binaries()
        if missing:
            raise ClusterUnavailable("Slurm binaries missing: " + ", ".join(missing))
        if os.geteuid() != 0:
            raise ClusterUnavailable("slurmd must run as root to launch jobs; tests run as a non-root user")
        self.root.mkdir(parents=True, exist_ok=True)
        try:
            self._start_munge()
            self._write_conf()
            self._spawn("slurmctld", [_which("slurmctld"), "-D", "-f", str(self.conf)])
            self._spawn("slurmd", [_which("slurmd"), "-D", "-f", str(self.conf), "-N", NODE])
            self._wait_idle()
        except BaseException:
            self.stop()
            raise
        return self

    def _start_munge(self) -> None:
        key = self.root / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o400)
        self.socket = self.root / "munge" / "munge.sock"
        self.socket.parent.mkdir(mode=0o755, exist_ok=True)
        self._spawn("munged", [
            _which("munged"), "--foreground", "--force",
            f"--key-file={key}", f"--socket={self.socket}",
            f"--pid-file={self.root / 'munged.pid'}", f"--log-file={self.root / 'munged.log'}",
            f"--seed-file={self.root / 'munged.seed'}",
        ])
        self._wait(lambda: self.socket.exists(), "munged to open its socket", "munged.log")

    def _write_conf(self) -> None:
        cpus, mem_mb = _node_resources()
        for sub in ("state", "spool"):
            (self.root / sub).mkdir(exist_ok=True)
        r = self.root
        self.conf.write_text("\n".join([
            "ClusterName=why17test",
            f"SlurmctldHost={NODE}",
            f"SlurmctldPort={_free_port()}",
            f"SlurmdPort={_free_port()}",
            "SlurmUser=root",
            "SlurmdUser=root",
            "AuthType=auth/munge",
            "CredType=cred/munge",
            f"AuthInfo=socket={self.socket}",
            f"StateSaveLocation={r / 'state'}",
            f"SlurmdSpoolDir={r / 'spool'}",
            f"SlurmctldPidFile={r / 'slurmctld.pid'}",
            f"SlurmdPidFile={r / 'slurmd.pid'}",
            f"SlurmctldLogFile={r / 'slurmctld.log'}",
            f"SlurmdLogFile={r / 'slurmd.log'}",
            "ProctrackType=proctrack/linuxproc",
            "TaskPlugin=task/none",
            "JobAcctGatherType=jobacct_gather/none",
            "AccountingStorageType=accounting_storage/none",
            "JobCompType=jobcomp/none",
            "MpiDefault=none",
            "SelectType=select/cons_tres",
            "SelectTypeParameters=CR_CPU",
            "SchedulerType=sched/backfill",
            "ReturnToService=2",
            "SlurmctldTimeout=30",
            "SlurmdTimeout=30",
            "InactiveLimit=0",
            "KillWait=5",
            "MinJobAge=600",
            f"NodeName={NODE} CPUs={cpus} RealMemory={mem_mb} State=UNKNOWN",
            f"PartitionName={PARTITION} Nodes={NODE} Default=YES MaxTime=INFINITE State=UP",
            "",
        ]))

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.root / f"{name}.out", "wb")
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT,
                                            stdin=subprocess.DEVNULL, env=self.env(),
                                            start_new_session=True)
        log.close()

    def _wait(self, ready, what: str, log: str) -> None:
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise ClusterUnavailable(f"{name} exited with status {proc.returncode} while waiting for "
                                             f"{what}: {self._tail(name)}")
            if ready():
                return
            time.sleep(0.2)
        raise ClusterUnavailable(f"timed out after {START_TIMEOUT_S:.0f} s waiting for {what}: {self._tail(log)}")

    def _wait_idle(self) -> None:
        def idle() -> bool:
            out = subprocess.run([_which("sinfo"), "-h", "-N", "-o", "%T"], capture_output=True,
                                 text=True, env=self.env(), timeout=30).stdout.strip()
            return out == "idle"
        self._wait(idle, "node localhost to be idle", "slurmctld.log")

    def _tail(self, name: str, lines: int = 5) -> str:
        for candidate in (self.root / name, self.root / f"{name}.log", self.root / f"{name}.out"):
            if candidate.is_file():
                return " | ".join(candidate.read_text(errors="replace").splitlines()[-lines:])
        return "(no log)"

    # -- stop --------------------------------------------------------------------------------------
    def stop(self) -> None:
        """Stop the daemons by process id, slurmd first; SIGKILL what has not exited after 10 s."""
        for name in ("slurmd", "slurmctld", "munged"):
            proc = self.procs.pop(name, None)
            if proc is None or proc.poll() is not None:
                continue
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)

    def __enter__(self) -> "Cluster":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

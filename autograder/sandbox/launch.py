"""One sandboxed child's life: its limits, how it starts, its handle and output, how it ends.

``launch_child`` is the ONE place a child is started: autograder/runtime/runner.py, wrapped in the
jail (autograder/sandbox/isolation.py: another uid, namespaces without network, a private root
without the grader's files, rlimits), started as a fresh interpreter or forked from this
process's fork server (autograder/sandbox/forkserver/) when there is one. ``ChildHandle`` holds
the process, its protocol pipes and its drained output (``OutputDrain``); ``stop``, ``kill`` and
``close`` end it and release what it held. What is said on its pipes is autograder/sandbox/channel.py's.
"""
from __future__ import annotations

import functools
import json
import os
import shutil
import signal
import subprocess
import sys
import sysconfig
import threading
from dataclasses import dataclass, field
from pathlib import Path

from autograder.sandbox import isolation
from autograder.sandbox.policy import JailLimits

ROOT = Path(__file__).resolve().parents[2]
RUNNER = Path(__file__).resolve().parents[1] / "runtime" / "runner.py"


@dataclass(frozen=True)
class Limits:
    """Limits of one child. Seconds, MiB and bytes as named."""

    time_limit_s: float = 60.0          # wall clock per call (course.yml time_limit_s); with a timer
                                        # (calltime.py) the ceiling of the limit it derives
    memory_limit_mb: int = 4096         # address space of the child (course.yml memory_limit_mb)
    startup_timeout_s: float = 120.0    # wall clock for the child's own imports (torch) before any call
    cpu_seconds: int = 1200             # total CPU seconds of one child, a backstop behind the wall clock
    file_size_bytes: int = 64 * 2**20   # largest file the child may write
    output_cap_bytes: int = 64 * 2**10  # student stdout+stderr kept; the rest is read and dropped
    hide: tuple[str, ...] = ()          # paths beyond the grader's own the child may not read: the
                                        # graded course's (policy.course_secrets), passed down
    sim_profile: str = ""               # the simulated GPU's card the child's machine shows (its
                                        # nvidia-smi: smi.py); "" shows none


@dataclass
class ChildHandle:
    """A running child: its process, the request and reply pipes, and its captured output."""

    proc: subprocess.Popen
    request_fd: int
    reply_fd: int
    host_dir: Path           # the folder the grader made (removed when the child is gone)
    output: "OutputDrain"
    buffer: bytearray = field(default_factory=bytearray)
    ready: dict | None = None
    who: str = "your code"   # in messages: "the process running <who> ..."
    device: object = None    # the simulated GPU (shared.simgpu.device.SimDevice) its requests reach
    device_calls: int = 0    # calls made on a simulated GPU so far
    idle_from: float | None = None   # its CPU seconds when the last reply came (between.py)
    idle_cpu: float = 0.0    # CPU seconds it used between calls so far
    cpu: object = None       # its cputime.Tree, once between.py first reads it

    @property
    def workdir(self) -> Path:
        """The working folder as the child sees it (with namespaces, its own size-limited tmpfs,
        which the host folder does not reflect); ``host_dir`` once the child is gone."""
        return isolation.live_view(self.proc.pid, self.host_dir)


#: Bytes of the pipe that carries the child's output (Linux F_SETPIPE_SZ; the default is 64 KiB):
#: a flood then costs one wake-up of the drain per MiB instead of one per 64 KiB.
OUTPUT_PIPE_BYTES = 2**20
_F_SETPIPE_SZ = 1031


def widen_pipe(fd: int, size: int = OUTPUT_PIPE_BYTES) -> None:
    """Ask for a pipe buffer of ``size`` bytes (best effort: the default stays when refused)."""
    try:
        import fcntl
        fcntl.fcntl(fd, _F_SETPIPE_SZ, size)
    except (OSError, ImportError):
        pass


class OutputDrain(threading.Thread):
    """Reads the child's stdout+stderr to the end, keeping the first ``cap`` bytes.

    Past the cap the output is moved from the pipe to /dev/null inside the kernel (splice):
    a flood is counted and thrown away without being copied into this process."""

    def __init__(self, fd: int, cap: int):
        super().__init__(daemon=True)
        self.fd, self.cap = fd, cap
        self.kept = bytearray()
        self.total = 0

    def run(self) -> None:
        sink = None
        try:
            while len(self.kept) < self.cap:
                chunk = os.read(self.fd, OUTPUT_PIPE_BYTES)
                if not chunk:
                    return
                self.total += len(chunk)
                self.kept += chunk[:self.cap - len(self.kept)]
            sink = os.open(os.devnull, os.O_WRONLY)
            splice = getattr(os, "splice", None)
            while True:
                moved = (splice(self.fd, sink, OUTPUT_PIPE_BYTES) if splice is not None
                         else len(os.read(self.fd, OUTPUT_PIPE_BYTES)))
                if not moved:
                    return
                self.total += moved
        except OSError:
            pass
        finally:
            if sink is not None:
                os.close(sink)
            os.close(self.fd)

    def text(self) -> str:
        cut = f"\n... ({self.total - len(self.kept)} more bytes not kept)" if self.total > len(self.kept) else ""
        return self.kept.decode("utf-8", "replace") + cut


def python_path() -> list[str]:
    """What the isolated child needs on sys.path: the project root and the venv's site-packages."""
    return list(_python_path())


@functools.lru_cache(maxsize=1)
def _python_path() -> tuple[str, ...]:
    """``python_path``, worked out once: fixed for the life of this process."""
    paths = [str(ROOT)]
    for key in ("purelib", "platlib"):
        p = sysconfig.get_paths()[key]
        if p not in paths:
            paths.append(p)
    return tuple(paths)


def launch_child(workdir: Path, limits: Limits, *, preload=("torch", "matplotlib.figure"),
                 simgpu: bool = True, early: bool = False) -> ChildHandle:
    """Start autograder/runtime/runner.py, jailed, with ``workdir`` as its cwd.

    The child gets its own session (so the whole process group can be killed), stdin from
    /dev/null, stdout+stderr on a drained pipe, and the protocol on two extra pipes passed with
    pass_fds. It imports ``preload`` and installs the simulated GPU (unless ``simgpu`` is False)
    before saying it is ready. It is forked from this process's fork server when there is one
    (the jail then runs the runner in-process: ``in_process`` in its policy), else a fresh
    interpreter. ``early``: while the fork server is still importing (its preload and its
    ``later``), start a fresh interpreter instead of waiting for it (for a child whose code
    imports only the standard library and ``preload``: autograder/sandbox/imports.py;
    docs/performance.md has what each way costs).
    """
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    out_r, out_w = os.pipe()
    widen_pipe(out_w)
    config = {"fd_in": req_r, "fd_out": rep_w, "path": python_path(), "preload": list(preload), "simgpu": simgpu,
              "limits": {"address_space_bytes": int(limits.memory_limit_mb) * 2**20,
                         "file_size_bytes": limits.file_size_bytes, "cpu_seconds": limits.cpu_seconds}}
    server = _fork_server(early)
    popen = server.spawn if server is not None else subprocess.Popen
    try:
        argv = isolation.wrap([sys.executable, "-I", "-S", "-B", str(RUNNER), json.dumps(config)],
                              workdir, (req_r, rep_w), JailLimits.from_sandbox(limits),
                              in_process=server is not None)
        proc = popen(
            argv,
            cwd=workdir, env=_environment(workdir), stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w,
            pass_fds=(req_r, rep_w), start_new_session=True, close_fds=True)
    finally:
        for fd in (req_r, rep_w, out_w):
            os.close(fd)
    drain = OutputDrain(out_r, limits.output_cap_bytes)
    drain.start()
    return ChildHandle(proc=proc, request_fd=req_w, reply_fd=rep_r, host_dir=workdir, output=drain)


def _fork_server(early: bool):
    """This process's fork server (a grade-all worker's, or one grading's: the same jailed child,
    forked from a process that imported the heavy libraries once), or None: there is none, or
    ``early`` and it is still importing."""
    from autograder.sandbox import forkserver
    server = forkserver.active()
    if server is not None and early and not server.is_ready():
        return None
    return server


def _environment(workdir: Path) -> dict:
    """The child's environment: built from scratch, with nothing of the grader's shell but PATH,
    HOME and the thread and matplotlib settings the operator chose."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(workdir)),
           "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0",
           # One compute thread: graders run side by side, and OpenMP threads spinning on a busy
           # machine make a small copy many times slower (docs/performance.md).
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for key in ("MPLCONFIGDIR", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if key in os.environ:
            env[key] = os.environ[key]
    return env


def kill(child: ChildHandle) -> None:
    """Kill the child's whole process group and release its pipes and folder."""
    try:
        os.killpg(child.proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        child.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass
    isolation.reap(child.proc.pid, child.host_dir)   # what its uid left behind; its cgroup; the mount point
    close(child)


def stop(child: ChildHandle) -> None:
    """Ask the child to end (EOF on its request pipe); kill it if it does not."""
    try:
        os.close(child.request_fd)
        child.request_fd = -1
        child.proc.wait(timeout=2)
    except (OSError, subprocess.TimeoutExpired):
        pass
    kill(child)


def close(child: ChildHandle) -> None:
    if child.cpu is not None:
        child.cpu.close()
    for attr in ("request_fd", "reply_fd"):
        fd = getattr(child, attr)
        if fd >= 0:
            try:
                os.close(fd)
            except OSError:
                pass
            setattr(child, attr, -1)
    child.output.join(timeout=2)
    shutil.rmtree(child.host_dir, ignore_errors=True)

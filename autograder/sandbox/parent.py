"""The parent side of running student code: one child process per submission, JSON lines only.

Student code never runs in the grader's process. ``launch_child`` is the ONE place a child is
started (a fork server or a hardened launcher -- another user, a network namespace, hidden
grader files -- replaces or wraps it); ``Sandbox`` keeps one child per submission alive across
calls, restarts it lazily after a crash or a timeout, and turns every way a call can go wrong
into a StudentError with a one-line reason. Nothing from the child is ever unpickled: replies
are JSON lines on a dedicated pipe (autograder/runtime/runner.py holds the protocol and the codec).
"""
from __future__ import annotations

import json
import os
import secrets
import select
import shutil
import signal
import subprocess
import sys
import sysconfig
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core.errors import StudentCrashed, StudentError, StudentMissing, StudentRaised, StudentTimeout
from autograder.gpu import host
from autograder.runtime import runner
from autograder.sandbox import isolation

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

    @property
    def workdir(self) -> Path:
        """The working folder as the child sees it (with namespaces, its own size-limited tmpfs,
        which the host folder does not reflect); ``host_dir`` once the child is gone."""
        return isolation.live_view(self.proc.pid, self.host_dir)


#: Seconds the first call on a child's simulated GPU may take at least (one-time imports: torch's
#: FlopCounterMode loads torch._dynamo, 2.4 s on this 2-core machine, at its first use).
FIRST_DEVICE_CALL_S = 15.0
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


class ChildGone(Exception):
    """The child died or broke the protocol; ``reason`` says how, in words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def python_path() -> list[str]:
    """What the isolated child needs on sys.path: the project root and the venv's site-packages."""
    paths = [str(ROOT)]
    for key in ("purelib", "platlib"):
        p = sysconfig.get_paths()[key]
        if p not in paths:
            paths.append(p)
    return paths


def launch_child(workdir: Path, limits: Limits, *, preload=("torch", "matplotlib.figure"),
                 simgpu: bool = True, early: bool = False) -> ChildHandle:
    """Start autograder/runtime/runner.py in a fresh isolated interpreter with ``workdir`` as its cwd.

    The child gets its own session (so the whole process group can be killed), stdin from
    /dev/null, stdout+stderr on a drained pipe, and the protocol on two extra pipes passed with
    pass_fds. It imports ``preload`` and installs the simulated GPU (unless ``simgpu`` is False)
    before saying it is ready. ``early``: while the fork server is still importing (``preload``, or
    LATER after it: ``ForkServer.settled``), start a fresh interpreter instead of waiting for it
    (for a child whose code imports only the standard library and ``preload``:
    autograder/sandbox/imports.py). A fresh interpreter costs about what a fork of the server's
    image does, a tenth of a CPU second, plus its own import of ``preload`` (matplotlib: about
    a CPU second on this 2-core machine).
    """
    req_r, req_w = os.pipe()
    rep_r, rep_w = os.pipe()
    out_r, out_w = os.pipe()
    widen_pipe(out_w)
    config = {
        "fd_in": req_r, "fd_out": rep_w, "path": python_path(), "preload": list(preload), "simgpu": simgpu,
        "limits": {
            "address_space_bytes": int(limits.memory_limit_mb) * 2**20,
            "file_size_bytes": limits.file_size_bytes,
            "cpu_seconds": limits.cpu_seconds,
        },
    }
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": os.environ.get("HOME", str(workdir)),
           "LANG": "C.UTF-8", "MPLBACKEND": "Agg", "PYTHONHASHSEED": "0",
           # One compute thread: graders run side by side, and spinning OpenMP threads on a busy
           # machine turn a millisecond copy into a tenth of a second.
           "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    for key in ("MPLCONFIGDIR", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        if key in os.environ:
            env[key] = os.environ[key]
    # grade-all workers run a fork server (autograder/sandbox/forkserver.py): the same isolated child,
    # forked from a process that imported torch once instead of paying the import per launch.
    from autograder.sandbox import forkserver
    server = forkserver.active()
    if server is not None and early and not server.settled():
        server = None
    popen = server.spawn if server is not None else subprocess.Popen
    try:
        # Hardening: the child starts through the jail (autograder/sandbox/isolation.py): its own
        # uid, namespaces without network, a private root without the grader's files, rlimits.
        argv = isolation.wrap([sys.executable, "-I", "-S", "-B", str(RUNNER), json.dumps(config)],
                              workdir, (req_r, rep_w), isolation.JailLimits.from_sandbox(limits))
        proc = popen(
            argv,
            cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=out_w, stderr=out_w,
            pass_fds=(req_r, rep_w), start_new_session=True, close_fds=True)
    finally:
        for fd in (req_r, rep_w, out_w):
            os.close(fd)
    drain = OutputDrain(out_r, limits.output_cap_bytes)
    drain.start()
    return ChildHandle(proc=proc, request_fd=req_w, reply_fd=rep_r, host_dir=workdir, output=drain)


#: How an exception's message says a file system is full (ENOSPC; EDQUOT: a disk quota).
_FULL = ("No space left on device", "Disk quota exceeded")


def quota_hint(text: str, limits: Limits) -> str:
    """What to add to an exception's message that says the disk is full: the working folder's
    quota, where the sandbox has one ('' otherwise)."""
    if not any(words in text for words in _FULL) or not isolation.protection().quota:
        return ""
    jail = isolation.JailLimits.from_sandbox(limits)
    return (f" (your code filled the disk space it is given: its working folder holds at most"
            f" {jail.disk_bytes // 2**20} MiB in {jail.disk_inodes} files and folders, /tmp"
            f" {jail.tmp_bytes // 2**20} MiB in {jail.tmp_inodes})")


def send(child: ChildHandle, message: dict) -> None:
    data = runner.dumps(message)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(child.request_fd, view):]
    except (BrokenPipeError, OSError):
        raise ChildGone(death_reason(child)) from None


def receive(child: ChildHandle, deadline: float) -> dict | None:
    """The next reply line as a dict; None when the deadline passed; ChildGone when the child died."""
    garbage = f"the process running {child.who} wrote garbage on the grader's channel"
    while True:
        newline = child.buffer.find(b"\n")
        if newline >= 0:
            line = bytes(child.buffer[:newline])
            del child.buffer[: newline + 1]
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                raise ChildGone(garbage) from None
            if not isinstance(message, dict):
                raise ChildGone(garbage)
            return message
        if len(child.buffer) > runner.MAX_REPLY_BYTES + 4096:
            raise ChildGone(f"the process running {child.who} sent an oversized reply")
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([child.reply_fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(child.reply_fd, 1 << 20)
        if not chunk:
            if child.buffer:   # half a line, then the end: the same verdict whether or not the
                # child had time to write more after it (which would make the line garbage)
                raise ChildGone(garbage)
            raise ChildGone(death_reason(child))
        child.buffer += chunk


def death_reason(child: ChildHandle) -> str:
    """How the child ended, in words: an exit code or a signal."""
    try:
        code = child.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return f"the process running {child.who} stopped answering"
    if code is None:
        return f"the process running {child.who} stopped answering"
    if code >= 0:
        return f"the process running {child.who} exited with code {code} (sys.exit or os._exit)"
    sig = -code
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
    hints = {signal.SIGKILL: ", most likely the memory limit", signal.SIGXCPU: ": CPU time limit",
             signal.SIGSEGV: ": a crash in native code"}
    return f"the process running {child.who} was killed by {name}{hints.get(sig, '')}"


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


class Sandbox:
    """Runs calls into one folder of code (a submission or the reference) in a child process.

    One child lives across calls (torch is imported once); after a crash or timeout it is killed
    and a fresh one starts on the next call. A function that timed out or killed its process is
    not called again in this sandbox: later calls fail at once with the same reason, so a hang
    costs one time limit, not one per test. A module that does not import fails every call into
    it with the same one-line reason.
    """

    def __init__(self, source: Path, limits: Limits, *, preload=("torch", "matplotlib.figure"),
                 simgpu: bool = True, label: str = "your code", timer=None, early: bool = False,
                 setting: dict | None = None, poisoned: dict | None = None):
        self.source = Path(source)
        #: The simulated-GPU config every call of this child runs on (None: each call brings its
        #: own). With a setting, the child's imports and calls share one device for its life, as
        #: one process shares one GPU: first-use costs once, the L2 and memory carry over.
        self.setting = setting
        #: The device this child's session talks to: (config key, SimDevice, public description,
        #: token); a fresh one for each child and, without a setting, for each call.
        self.session: tuple | None = None
        self.limits = limits
        #: autograder/sandbox/calltime.ReferenceTimer: each call's limit from the reference's time
        #: for the same call (None: ``limits.time_limit_s`` for every call).
        self.timer = timer
        self.import_s: dict[str, float] = {}   # module -> seconds its import took here
        self.preload = tuple(preload)
        self.use_simgpu = simgpu
        self.early = early   # launch_child's ``early``: a fresh interpreter while the fork server imports
        self.label = label
        self.child: ChildHandle | None = None
        # 'module' or 'module.function' -> error; shared by the children of one file (perfile.py)
        self.poisoned: dict[str, StudentError] = {} if poisoned is None else poisoned
        self.modules: dict[str, list[str] | StudentError] = {}
        self.starts = 0
        self.output_log: list[str] = []

    # ---------------------------------------------------------------- lifecycle
    def start(self) -> ChildHandle:
        """The live child, launching one (in a fresh copy of the source) when there is none."""
        if self.child is not None and self.child.proc.poll() is None:
            return self.child
        if self.child is not None:
            self._discard()
        workdir = Path(tempfile.mkdtemp(prefix="grader-run-"))
        for path in self.source.iterdir():
            if path.is_file() and not path.is_symlink():
                shutil.copy2(path, workdir / path.name)
        self.session = None                  # a new process meets a new device
        self.child = launch_child(workdir, self.limits, preload=self.preload, simgpu=self.use_simgpu,
                                  early=self.early)
        self.child.who = self.label
        self.starts += 1
        return self.child

    def _ready(self, child: ChildHandle) -> None:
        if child.ready is not None:
            return
        try:
            message = receive(child, time.monotonic() + self.limits.startup_timeout_s)
        except ChildGone as exc:
            self._discard()
            raise StudentCrashed(f"the grading process did not start: {exc.reason}") from None
        if message is None or not message.get("ready"):
            self._discard()
            raise StudentCrashed("the grading process did not start in time")
        child.ready = message

    @property
    def simgpu(self) -> bool:
        """Whether the child has the simulated GPU installed (starts a child to find out)."""
        child = self.start()
        self._ready(child)
        return bool(child.ready.get("simgpu"))

    def close(self) -> None:
        if self.child is not None:
            stop(self.child)
            self._keep_output(self.child)
            self.child = None

    def _discard(self) -> None:
        if self.child is not None:
            kill(self.child)
            self._keep_output(self.child)
            self.child = None

    def _keep_output(self, child: ChildHandle) -> None:
        text = child.output.text()
        if text:
            self.output_log.append(text)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # ---------------------------------------------------------------- requests
    def import_seconds(self, module: str) -> float:
        """Seconds ``module``'s import took in this sandbox (imports it now if it has not yet)."""
        if module not in self.import_s:
            self.has(module)
        return self.import_s.get(module, 0.0)

    def _request(self, message: dict, timeout_s: float, what: str, poison_key: str, *,
                 timed: dict | None = None, device=None) -> dict:
        """The reply to ``message``. ``timed`` (the request as the caller made it, for
        calltime.ReferenceTimer) with a timer: the limit comes from the reference's time for the
        same request, asked only once the call has run past the timer's floor. ``device``: a
        call's simulated GPU, held by the child that runs it (a fresh one after a timeout or a
        crash of another function)."""
        if poison_key in self.poisoned:
            raise self.poisoned[poison_key]
        module = message["module"]
        if module in self.poisoned:
            raise self.poisoned[module]
        child = self.start()
        self._ready(child)
        if message["op"] == "has" and self.setting is not None:   # imported on the child's device
            device, public, token = self._session(self.setting, fresh=False)
            message = {**message, "sim": public, "session": token}
        child.device = device
        if device is not None:
            device.begin_call()
        # Ids are random so that replies written ahead of time by student code match nothing.
        message = {"id": secrets.randbits(62), **message}
        timer = self.timer if timed is not None else None
        try:
            started = time.monotonic()
            send(child, message)
            limit = timeout_s if timer is None else timer.floor_s
            # The first call on a child's simulated GPU may pay one-time imports (torch's own
            # tools load their machinery at first use, as a first CUDA call pays the context's
            # start): it gets at least FIRST_DEVICE_CALL_S.
            on_device = device is not None and message["op"] == "call"
            first = on_device and not child.device_calls
            child.device_calls += on_device
            grace = FIRST_DEVICE_CALL_S if first else 0.0
            limit = max(limit, grace)
            # A call on the simulated GPU that keeps asking the device for work is running, not
            # hung: each request served moves its deadline to ``limit`` after it, up to the
            # sandbox's ceiling (a time-based benchmark loop of tiny kernels sends thousands).
            busy = (limit, started + self.limits.time_limit_s) if device is not None else None
            reply = self._reply_to(child, message["id"], started + limit, busy)
            if reply is None and timer is not None and timer.floor_s < timer.ceiling_s:   # past the floor
                asked = time.monotonic()
                limit = max(timer.limit_s(timed), grace)
                paused = time.monotonic() - asked   # timing the reference (a simulated GPU waits meanwhile)
                reply = self._reply_to(child, message["id"], started + limit + paused, busy)
            if reply is None:
                self._discard()
                how = f" ({timer.describe()})" if timer is not None else ""
                error = StudentTimeout(f"{what} did not return within {round(limit, 1):g} s{how}")
                error.limit_s = limit
                self.poisoned[poison_key] = error
                raise error
            return reply
        except ChildGone as exc:
            self._discard()
            error = StudentCrashed(f"{what}: {exc.reason}")
            self.poisoned[poison_key] = error
            raise error from None

    @staticmethod
    def _reply_to(child: ChildHandle, request_id: int, deadline: float,
                  busy: tuple[float, float] | None = None) -> dict | None:
        """The reply carrying ``request_id``, or None once ``deadline`` (monotonic) passed.

        ``busy`` = (seconds, ceiling): each batch of simulated-GPU requests served moves the
        deadline to ``seconds`` after it, never past ``ceiling`` (monotonic)."""
        while True:
            reply = receive(child, deadline)
            if reply is not None and "dev" in reply and "id" not in reply:   # the simulated GPU's requests
                try:
                    host.serve(child, reply, send)
                except host.Refused as exc:
                    raise ChildGone(exc.reason) from None
                if busy is not None:
                    deadline = min(max(deadline, time.monotonic() + busy[0]), max(deadline, busy[1]))
                continue
            if reply is None or reply.get("id") == request_id:
                return reply

    def _session(self, sim: dict, fresh: bool) -> tuple:
        """(device, public description, token) of the session for config ``sim``: the child's
        current one when it is on the same config and ``fresh`` is False, else a new device."""
        key = json.dumps(sim, sort_keys=True)
        if not fresh and self.session is not None and self.session[0] == key:
            return self.session[1:]
        device, public = host.open(sim)      # the simulated GPU stays here; the child sees its properties
        self.session = (key, device, public, secrets.randbits(62))
        return self.session[1:]

    def has(self, module: str) -> list[str]:
        """The public callables of ``module``; StudentMissing when it is absent or does not import."""
        known = self.modules.get(module)
        if isinstance(known, list):
            return known
        if isinstance(known, StudentError):
            raise known
        if isinstance(self.poisoned.get(module), StudentMissing):
            raise self.poisoned[module]          # another child of this file could not import it
        try:
            self._ready(self.start())   # the child's own start-up is no part of the import's time
            started = time.monotonic()
            reply = self._request({"op": "has", "module": module}, self.limits.time_limit_s,
                                  f"{module}.py", module, timed={"op": "has", "module": module})
            self.import_s[module] = time.monotonic() - started
        except StudentTimeout as exc:
            limit = getattr(exc, "limit_s", self.limits.time_limit_s)
            error = StudentMissing(f"{module}.py did not finish importing within {round(limit, 1):g} s")
            self.modules[module] = self.poisoned[module] = error
            raise error from None
        except StudentCrashed as exc:
            reason = str(exc).removeprefix(f"{module}.py: ")
            error = StudentMissing(f"{module}.py does not import: {reason}")
            self.modules[module] = self.poisoned[module] = error
            raise error from None
        if reply.get("ok"):
            self.modules[module] = list(reply.get("value") or [])
            return self.modules[module]
        error = StudentMissing(str(reply.get("message", f"{module}.py does not import")))
        self.modules[module] = self.poisoned[module] = error
        raise error

    def call(self, module: str, function: str, args=(), kwargs=None, *, sim: dict | None = None,
             trace: bool = False, watch: bool = False, timeout_s: float | None = None):
        """Run ``module.function(*args, **kwargs)`` in the child; (value, trace) as plain data.

        ``trace`` asks for the simulated GPU's trace of the call (with ``sim``); ``watch`` (without
        ``sim``) asks for the torch calls it made, as ``{"torch_ops": [...]}`` (autograder.runtime.runner.TorchWatch).
        """
        self.has(module)
        device = public = token = None
        if sim is not None:
            # With a setting, every call on it shares the child's device; without one (the
            # reference's sandbox), each call meets a device of its own.
            device, public, token = self._session(sim, fresh=self.setting is None or sim != self.setting)
        message = {"op": "call", "module": module, "function": function,
                   "args": runner.encode(list(args)), "kwargs": runner.encode(dict(kwargs or {})),
                   "sim": public, "session": token, "trace": bool(trace), "watch": bool(watch)}
        reply = self._request(message, timeout_s or self.limits.time_limit_s, function,
                              f"{module}.{function}", device=device,
                              timed=None if timeout_s else {"op": "call", "module": module, "function": function,
                                                            "args": args, "kwargs": kwargs, "sim": sim,
                                                            "trace": trace, "watch": watch})
        if reply.get("ok"):
            try:
                value = runner.decode(reply.get("value"))
                return value, (device.trace() if device is not None and trace else
                               {} if device is not None else runner.decode(reply.get("trace")) or {})
            except (RecursionError, ValueError, TypeError):
                raise StudentCrashed(f"{function}: the value returned could not be read as plain data") from None
        kind = reply.get("kind")
        text = str(reply.get("message", ""))
        if kind == "raised":
            error = StudentRaised(str(reply.get("exc_type", "Exception")), text + quota_hint(text, self.limits))
            error.function = function
            raise error
        if kind in ("missing", "import"):
            raise StudentMissing(text)
        raise StudentCrashed(text)

    def output(self) -> str:
        """What the code printed (stdout+stderr), capped per child."""
        texts = list(self.output_log)
        if self.child is not None:
            texts.append(self.child.output.text())
        return "\n".join(t for t in texts if t)

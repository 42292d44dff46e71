"""The parent side of running student code: a ``Sandbox`` of calls into one folder of code.

Student code never runs in the grader's process. ``Sandbox`` keeps one child per submission alive
across calls (autograder/sandbox/launch.py starts it: ``launch_child`` is the one place a child is
started), restarts it lazily after a crash or a timeout, and turns every way a call can go wrong
into a StudentError with a one-line reason. Requests and replies are JSON lines on a dedicated pipe
(autograder/sandbox/channel.py; autograder/runtime/runner.py holds the protocol and the codec).
"""
from __future__ import annotations

import json
import secrets
import shutil
import tempfile
import time
from pathlib import Path

from autograder.core.errors import StudentCrashed, StudentError, StudentMissing, StudentRaised, StudentTimeout
from autograder.runtime import runner
from autograder.sandbox import between, cgroup, cputime, gpuhost, isolation, policy, replies, waiting
from autograder.sandbox.calltime import Deadline
from autograder.sandbox.channel import ChildGone, receive, send
from autograder.sandbox.launch import ChildHandle, Limits, kill, launch_child, stop
from autograder.sandbox.policy import JailLimits

#: Seconds the first call on a child's simulated GPU may take at least (one-time imports: torch's
#: FlopCounterMode loads torch._dynamo at its first use; docs/performance.md).
FIRST_DEVICE_CALL = Deadline(15.0, "the least a first call on a simulated GPU gets, for one-time imports")


#: Seconds a call must take before the grader looks at how much memory its child reached: filling
#: gigabytes takes seconds, an honest call milliseconds (so the look costs nothing for those).
HOG_LOOK_S = 1.0
#: Share of the child's memory (its cgroup's limit) at or past which a call is a memory hog: it is
#: failed and its function not called again in any child of the file, so that filling the memory
#: (seconds of the machine's time per child) is paid once, not once per child.
HOG_SHARE = 0.75

#: How an exception's message says a file system is full (ENOSPC; EDQUOT: a disk quota).
_FULL = ("No space left on device", "Disk quota exceeded")


def poison_key(module: str, function: str, sim: dict | None) -> str:
    """The key under which a hang or a crash of ``module.function`` ends that function for the
    rest of the grading (``Sandbox.poisoned``). Calls on the real device (``sim`` None) and on the
    simulated GPU (any setting) are apart: a function that outlasts its limit on a slow grading
    CPU (a large matmul) may still return on the simulated device, and the GPU checks judge it
    there. Within the simulated device a hang still costs one limit, whichever setting met it."""
    return f"{module}.{function}" + ("" if sim is None else "@simgpu")


def quota_hint(text: str, limits: Limits) -> str:
    """What to add to an exception's message that says the disk is full: the working folder's
    quota, where the sandbox has one ('' otherwise)."""
    if not any(words in text for words in _FULL) or not isolation.protection().quota:
        return ""
    jail = JailLimits.from_sandbox(limits)
    return (f" (your code filled the disk space it is given: its working folder holds at most"
            f" {jail.disk_bytes // 2**20} MiB in {jail.disk_inodes} files and folders, /tmp"
            f" {jail.tmp_bytes // 2**20} MiB in {jail.tmp_inodes})")


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

    def _charge_memory(self, module: str, function: str) -> None:
        """Fail ``function`` (here and in every child of its file, on any device) when its child's
        memory reached HOG_SHARE of its limit; nothing where no memory cgroup reports a peak."""
        limit = JailLimits.from_sandbox(self.limits).memory_bytes
        peak = cgroup.peak_bytes(policy.group_name(self.child.host_dir)) if self.child is not None else None
        if peak is None or peak < HOG_SHARE * limit:
            return
        self._discard()    # its memory is given back at once
        error = StudentCrashed(f"{function} took {peak / 2**20:.0f} MiB, {HOG_SHARE:.0%} or more of the "
                               f"{limit // 2**20} MiB of memory it is given; it is not called again")
        for sim in (None, {}):
            self.poisoned[poison_key(module, function, sim)] = error
        raise error

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

    def _request(self, message: dict, deadline: Deadline, what: str, poison_key: str, *,
                 timed: dict | None = None, device=None) -> dict:
        """The reply to ``message`` within ``deadline`` (``deadline_for``). ``timed`` (the request
        as the caller made it, for calltime.ReferenceTimer) with a timer: past ``deadline`` (the
        floor), the reference's time for the same request sets a new one. ``device``: a call's
        simulated GPU, held by the child that runs it (a fresh one after a timeout or a crash of
        another function)."""
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
        if device is not None:       # by the device's clock the call may run the sandbox's limit
            device.begin_call(self.limits.time_limit_s)
        # Ids are random so that replies written ahead of time by student code match nothing.
        message = {"id": secrets.randbits(62), **message}
        timer = self.timer if timed is not None else None
        # The first call on a child's simulated GPU may pay one-time imports (torch's own tools
        # load their machinery at first use, as a first CUDA call pays the context's start).
        on_device = device is not None and message["op"] == "call"
        grace = FIRST_DEVICE_CALL if on_device and not child.device_calls else None
        child.device_calls += on_device
        if grace is not None:
            deadline = deadline.at_least(grace)
        try:
            since = (between.charge(self, child, module), time.monotonic())   # charges CPU since its last reply
            held = cputime.Held(child.cpu, *since)   # a busy machine moves its deadlines on
            send(child, message)
            busy = (deadline.seconds, self.limits.time_limit_s) if device is not None else None
            wait = waiting.Wait(child, message["id"], since, busy, held)
            reply = wait.until(since[1] + deadline.seconds)
            if reply is None and timer is not None and timer.floor_s < timer.ceiling_s:   # past the floor
                asked = time.monotonic()
                deadline = timer.deadline(timed)
                deadline = deadline.at_least(grace) if grace is not None else deadline
                paused = time.monotonic() - asked   # timing the reference (a simulated GPU waits meanwhile)
                reply = wait.until(since[1] + deadline.seconds + paused + held.given)
            if reply is None:        # past the limit in wall time: charged only once it is CPU time too
                reply = wait.while_starved(deadline.seconds)
            if reply is None:
                cputime.STARVED.add(held)
                self._discard()
                error = StudentTimeout(deadline.message(what))
                error.limit_s = deadline.seconds
                self.poisoned[poison_key] = error
                raise error
            between.mark(child)
            cputime.STARVED.add(held, child.idle_from)   # the CPU seconds ``mark`` just read
            return reply
        except ChildGone as exc:
            self._discard()
            error = StudentCrashed(f"{what}: {exc.reason}")
            self.poisoned[poison_key] = error
            raise error from None

    def deadline_for(self, timeout_s: float | None = None) -> Deadline:
        """The Deadline a request starts with: ``timeout_s`` when the grader set one for this call,
        else the timer's floor (the reference's time may extend it), else the sandbox's limit."""
        if timeout_s:
            return Deadline(timeout_s, "the limit the grader set for this call")
        if self.timer is not None:
            return self.timer.floor()
        return Deadline(self.limits.time_limit_s, "the time limit of a call")

    def _session(self, sim: dict, fresh: bool) -> tuple:
        """(device, public description, token) of the session for config ``sim``: the child's
        current one when it is on the same config and ``fresh`` is False, else a new device."""
        key = json.dumps(sim, sort_keys=True)
        if not fresh and self.session is not None and self.session[0] == key:
            return self.session[1:]
        device, public = gpuhost.open(sim)      # the simulated GPU stays here; the child sees its properties
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
            reply = self._request({"op": "has", "module": module}, self.deadline_for(),
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
        try:
            outcome = replies.has_outcome(reply)
        except replies.BadReply as exc:
            self._discard()   # a child that forges replies serves nothing more
            outcome = replies.Outcome(False, message=f"{module}.py does not import: the process running "
                                                     f"{self.label} {exc.reason}")
        if isinstance(outcome, list):
            self.modules[module] = outcome
            return outcome
        error = StudentMissing(outcome.message or f"{module}.py does not import")
        self.modules[module] = self.poisoned[module] = error
        raise error

    def call(self, module: str, function: str, args=(), kwargs=None, *, sim: dict | None = None,
             trace: bool = False, watch: bool = False, timeout_s: float | None = None):
        """Run ``module.function(*args, **kwargs)`` in the child; (value, trace) as plain data.

        ``trace`` asks for the simulated GPU's trace of the call (with ``sim``); ``watch`` (without
        ``sim``) asks for the aten ops it ran, as ``{"torch_ops": [...]}`` (autograder.runtime.runner.TorchWatch).
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
        began = time.monotonic()
        reply = self._request(message, self.deadline_for(timeout_s), function,
                              poison_key(module, function, sim), device=device,
                              timed=None if timeout_s else {"op": "call", "module": module, "function": function,
                                                            "args": args, "kwargs": kwargs, "sim": sim,
                                                            "trace": trace, "watch": watch})
        if time.monotonic() - began > HOG_LOOK_S:
            self._charge_memory(module, function)
        try:
            outcome = replies.call_outcome(reply)
        except replies.BadReply as exc:
            # Charged to this function, once: its child is replaced and it is not called again.
            self._discard()
            error = StudentCrashed(f"{function}: the process running {self.label} {exc.reason}")
            self.poisoned[poison_key(module, function, sim)] = error
            raise error from None
        if outcome.ok:
            return outcome.value, (device.trace() if device is not None and trace else
                                   {} if device is not None else outcome.trace)
        kind, text = outcome.kind, outcome.message
        if kind == "raised":
            error = StudentRaised(outcome.exc_type, text + quota_hint(text, self.limits))
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

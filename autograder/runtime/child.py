"""The request loop of the sandboxed child: import student modules, run calls, reply with plain data.

``Child`` reads one JSON request per line and answers each with one JSON line (the protocol is in
autograder/runtime/runner.py, the script that starts it); a student's failure becomes a one-line
reply that names the file and line, never a traceback.
"""
from __future__ import annotations

import importlib
import os
import traceback

from autograder.runtime import torchwatch
from autograder.runtime.codec import decode, dumps, encode
from autograder.runtime.dtypes import to_torch
from autograder.runtime.torchwatch import TorchWatch

#: Largest reply line in bytes; a bigger value is refused with a one-line error.
MAX_REPLY_BYTES = 8 * 2**20
#: Longest message text kept from a student's exception, in characters.
MAX_MESSAGE = 500


class _Exit(Exception):
    pass


def _no_context():
    import contextlib
    return contextlib.nullcontext()


def _one_line(text: str) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= MAX_MESSAGE else text[: MAX_MESSAGE - 3] + "..."


def _import_failure(module: str, exc: BaseException) -> str:
    """'bw.py does not import: SyntaxError line 12' and the like, one line."""
    name = f"{module}.py"
    if isinstance(exc, SyntaxError):
        where = f" line {exc.lineno}" if exc.lineno else ""
        source = os.path.basename(exc.filename or name)
        other = f" (in {source})" if source != name else ""
        return f"{name} does not import: {type(exc).__name__}{where}{other}: {_one_line(exc.msg)}"
    if isinstance(exc, SystemExit):
        return f"{name} does not import: it calls sys.exit({exc.code!r}) at import time"
    line = _student_line(exc)
    return f"{name} does not import: {type(exc).__name__}{line}: {_one_line(exc)}"


def _student_line(exc: BaseException) -> str:
    """' (predict.py line 7)' for the deepest frame in the student's folder, or ''."""
    cwd = os.getcwd()
    where = ""
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename.startswith(cwd + os.sep):
            where = f" ({os.path.basename(frame.filename)} line {frame.lineno})"
    return where


class Child:
    """The request loop: imports modules on demand, runs calls, replies with plain data."""

    def __init__(self, fd_in: int, fd_out: int):
        self.reader = os.fdopen(fd_in, "rb")
        self.fd_out = fd_out
        self.modules: dict[str, object] = {}
        self.failed: dict[str, str] = {}
        self.simgpu = None
        #: The simulated GPU this child is attached to: (session token, attach context, frontend).
        #: A session lasts across requests until one names another token: the device keeps its
        #: first-use state, L2 and memory between calls, as one GPU does for one process.
        self.session: tuple | None = None
        # Before any student code runs: the threads it starts (a worker it joins, a pool's worker
        # an earlier call started) carry their torch calls into a watched call's record.
        torchwatch.install()

    def attach(self, request: dict):
        """The frontend of the session ``request`` names (entering it, leaving any other), or None."""
        sim, token = request.get("sim"), request.get("session")
        if sim is None or self.simgpu is None:
            self.detach()                     # a request without a device runs without one
            return None
        if self.session is not None and self.session[0] == token:
            return self.session[2]
        self.detach()
        context = self.simgpu.attach(sim, self.simgpu.PipeLink(self.send, self.reader.readline))
        frontend = context.__enter__()
        self.session = (token, context, frontend)
        return frontend

    def detach(self) -> None:
        """Leave the current session: its queued requests go out; later ones are dropped."""
        if self.session is not None:
            _token, context, _frontend = self.session
            self.session = None
            context.__exit__(None, None, None)

    def flush(self) -> None:
        """Send the session's queued device requests (before a reply, so the trace is complete)."""
        if self.session is not None:
            self.session[2].link.flush()

    def send(self, message: dict) -> None:
        data = dumps(message)
        if len(data) > MAX_REPLY_BYTES:
            data = dumps({"id": message.get("id"), "ok": False, "kind": "protocol",
                          "message": f"the value returned is too large to grade ({len(data)} bytes as JSON)"})
        view = memoryview(data)
        while view:
            written = os.write(self.fd_out, view)
            view = view[written:]

    def module(self, name: str, attached: bool = False):
        """The imported student module, or raise _Exit with a one-line reason.

        ``attached``: the import runs on the session's simulated GPU (a warm-up at import time
        warms that device, as on a GPU); otherwise on a local default one."""
        if name in self.modules:
            return self.modules[name]
        if name in self.failed:
            raise _Exit(self.failed[name])
        if not name.isidentifier() or not os.path.isfile(f"{name}.py"):
            self.failed[name] = f"the submission has no {name}.py"
            raise _Exit(self.failed[name])
        try:
            # Imported on the simulated GPU, as on the GPU machine the code was written for: a
            # module-level `torch.cuda.is_available()` must not pick the CPU for every later call.
            local = self.simgpu is not None and not attached
            with self.simgpu.active(self.simgpu.config()) if local else _no_context():
                mod = importlib.import_module(name)
        except BaseException as exc:  # SyntaxError, SystemExit, anything at import
            if isinstance(exc, KeyboardInterrupt):
                raise
            self.failed[name] = _import_failure(name, exc)
            raise _Exit(self.failed[name]) from None
        self.modules[name] = mod
        return mod

    def handle(self, request: dict) -> dict:
        rid = request.get("id")
        op = request.get("op")
        try:
            if op == "has":
                attached = self.attach(request) is not None
                try:
                    mod = self.module(request["module"], attached)
                finally:
                    self.flush()
                names = sorted(n for n, v in vars(mod).items() if callable(v) and not n.startswith("_"))
                return {"id": rid, "ok": True, "value": names}
            if op == "call":
                return self.call(rid, request)
            return {"id": rid, "ok": False, "kind": "protocol", "message": f"unknown op {op!r}"}
        except _Exit as exc:
            kind = "missing" if str(exc).startswith("the submission has no") else "import"
            return {"id": rid, "ok": False, "kind": kind, "message": str(exc)}

    def cpu_time(self):
        """A real-CPU call's clocks read the process's CPU time (shared/simgpu/hostclock.py): a
        preemption on a busy grading machine never enters a timing. Needs the simulated GPU's
        clock dispatchers; without them the clocks stay real."""
        if self.simgpu is None:
            return _no_context()
        return self.simgpu.cpu_time()

    def call(self, rid, request: dict) -> dict:
        try:
            return self._call(rid, request)
        finally:
            self.flush()

    def _call(self, rid, request: dict) -> dict:
        module, function = request["module"], request["function"]
        frontend = self.attach(request)
        mod = self.module(module, frontend is not None)
        fn = mod
        for part in function.split("."):  # 'predict.attainable_tflops': the predict roofline.py imported
            fn = getattr(fn, part, None) if not part.startswith("_") else None
        if fn is None or not callable(fn):
            return {"id": rid, "ok": False, "kind": "missing",
                    "message": f"{module}.py has no function {function}"}
        args = decode(request.get("args", []))
        kwargs = decode(request.get("kwargs", {}))
        args, kwargs = to_torch(args), to_torch(kwargs)
        sim = request.get("sim")
        trace = None
        try:
            if request.get("watch") and sim is None:
                with self.cpu_time() as clock, TorchWatch(clock) as watch:
                    value = fn(*args, **kwargs)
                encoded = encode(value)
                trace = {"torch_ops": watch.summary(), "torch_trace": watch.trace()}
            elif sim is not None:
                if frontend is None:
                    return {"id": rid, "ok": False, "kind": "protocol",
                            "message": "the simulated GPU (shared.simgpu) is not available in this checkout"}
                # The device lives in the grader's process: ``sim`` is only its public description,
                # and every request goes over the pipes (shared/simgpu/frontend.py, PipeLink).
                value = fn(*args, **kwargs)
                encoded = encode(value)
            else:
                with self.cpu_time():
                    value = fn(*args, **kwargs)
                encoded = encode(value)
        except SystemExit as exc:
            return {"id": rid, "ok": False, "kind": "exit",
                    "message": f"{function} called sys.exit({exc.code!r})"}
        except KeyboardInterrupt:
            return {"id": rid, "ok": False, "kind": "exit", "message": f"{function} raised KeyboardInterrupt"}
        except BaseException as exc:  # the student's exception is the answer
            return {"id": rid, "ok": False, "kind": "raised", "exc_type": type(exc).__name__,
                    "message": _one_line(exc) + _student_line(exc)}
        return {"id": rid, "ok": True, "value": encoded, "trace": encode(trace)}

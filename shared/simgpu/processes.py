"""Each device setting in a fresh process of its own, as the grader runs a student's file.

The grader calls a timing function under each setting of the checks (shared/simgpu/settings.py)
in a child process that serves that setting only: the student's module is imported on the
setting's device, and every later call of that child runs on the same device, as one process
keeps one GPU (first-use state, L2 and memory carry over from call to call). When the checks move
on to another file or setting, that child is stopped and a new one starts. So a module-level
warm-up flag, or a thread pool the first call starts and later calls reuse, meets every setting
new. ``ProcessRunner`` runs the student's file the same way on this machine, with the device in
the child itself (``simgpu.active``); ``run_apart`` runs any other step (what the command shows
before its verdicts) in a process of its own, so the student's code never runs in the process
that forks the children.

A child is a fork of this process where the platform has fork (fast: torch is imported once),
else a fresh interpreter. A call or an import that outlives ``limit_s`` seconds is stopped and
charged once: later calls of the same function fail at once with the same reason, in any setting.
"""
from __future__ import annotations

import json
import multiprocessing
import os
import sys
from pathlib import Path
from typing import Callable

from shared.simgpu import local

#: Seconds a call of a student function may take, or an import of the student's module: the
#: grader's own limit per call (course.yml, ``time_limit_s``).
LIMIT_S = 60.0
#: Longest text kept from a student's exception message, in characters.
MAX_MESSAGE = 200
#: Most elements of a tensor or array whose values a call's return value keeps (larger: none).
MAX_ELEMENTS = 100_000


#: Exit code of ``import_files`` when a file does not import (it printed why).
IMPORT_FAILED = 3


class StudentFailed(Exception):
    """A call that gave no value: the student's code raised, hung, crashed, or did not import.
    ``str(exc)`` is one line saying which."""


class Array:
    """A tensor or numpy array a student function returned: its ``kind``, ``dtype`` and ``data``
    (nested lists, or None when it holds no values or too many), as the grader receives one."""

    def __init__(self, kind: str, dtype: str, data):
        self.kind, self.dtype, self.data = kind, dtype, data

    def __repr__(self) -> str:
        return f"<{self.kind} dtype={self.dtype}>"


def _context():
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def one_line(exc: BaseException) -> str:
    """``exc``'s message on one line, at most MAX_MESSAGE characters."""
    return " ".join(str(exc).split())[:MAX_MESSAGE]


def import_failure(name: str, exc: BaseException) -> str:
    """'bw.py does not import: SyntaxError line 1: ...', one line."""
    where = f" line {exc.lineno}" if isinstance(exc, SyntaxError) and exc.lineno else ""
    if isinstance(exc, SystemExit):
        return f"{name}.py does not import: it calls sys.exit({exc.code!r}) at import time"
    text = exc.msg if isinstance(exc, SyntaxError) else exc
    return f"{name}.py does not import: {type(exc).__name__}{where}: {one_line(text)}"


def plain(value, depth: int = 0):
    """``value`` as data that crosses a pipe as the grader's does: numbers, strings, lists,
    tuples and dicts as they are, numpy scalars as numbers, tensors and arrays as ``Array``,
    anything else as a short string (which no check reads as a number)."""
    if depth > 50:
        return "<nested too deeply>"
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, tuple):
        return tuple(plain(v, depth + 1) for v in value)
    if isinstance(value, list):
        return [plain(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {plain(k, depth + 1): plain(v, depth + 1) for k, v in value.items()}
    module = type(value).__module__ or ""
    if module.startswith("numpy") and hasattr(value, "tolist"):
        if getattr(value, "ndim", 1) == 0:
            return value.item()
        return Array("numpy", str(value.dtype), _values(value, lambda: value.size, value.tolist))
    if module.startswith("torch") and hasattr(value, "numel"):
        return Array("torch.Tensor", str(value.dtype).removeprefix("torch."),
                     _values(value, value.numel, lambda: value.detach().cpu().tolist()))
    try:
        return f"<{module}.{type(value).__qualname__} {repr(value)[:MAX_MESSAGE]}>"
    except Exception:  # a student's __repr__ that raises
        return f"<{module}.{type(value).__qualname__}>"


def _values(value, size, tolist):
    """``tolist()`` when the array holds at most MAX_ELEMENTS values, else None (or None when it
    holds none: a tensor on the simulated GPU has no values to read)."""
    try:
        return tolist() if size() <= MAX_ELEMENTS else None
    except Exception:  # meta tensors hold no values
        return None


def prepare() -> None:
    """Ready this process to start children: the simulated GPU installed and torch imported (a
    fork inherits both), and torch's FLOP registry imported before a device makes
    torch.version.cuda a CUDA build's (imported under one, torch warns on stderr that triton, a
    GPU compiler, is missing). Idempotent."""
    from shared import simgpu

    simgpu.install()
    import torch.utils.flop_counter  # noqa: F401


def _settle_threads() -> None:
    """Rebuild torch's compute-thread pool in a forked child, as a fresh interpreter has it."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(torch.get_num_threads())


def _exit(code: int) -> None:
    """Leave the child at once (threads the student left running do not keep it alive)."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a stream the student closed
            pass
    os._exit(code)


def _serve(conn, path: str, name: str, cfg: dict) -> None:
    """A child's life: import ``path`` on the device ``cfg``, then run each call sent on ``conn``
    on that same device, replying ('ok', value, trace) or ('failed', message)."""
    _settle_threads()
    prepare()
    from shared import simgpu

    with simgpu.active(cfg) as device:
        try:
            module = local.import_file(Path(path), name)
        except BaseException as exc:  # SyntaxError, SystemExit, anything at import
            conn.send(("failed", import_failure(name, exc)))
            _exit(0)
        conn.send(("ready", None))
        while True:
            try:
                request = conn.recv()
            except EOFError:
                break
            if request is None:
                break
            conn.send(_call(device, module, *request))
    _exit(0)


def _call(device, module, function: str, args: tuple, kwargs: dict) -> tuple:
    device.begin_call()             # the call's trace starts empty; the device keeps its state
    fn = getattr(module, function, None)
    if not callable(fn):
        return ("failed", f"{module.__name__}.py has no function {function}")
    try:
        value = plain(fn(*args, **kwargs))
    except SystemExit as exc:
        return ("failed", f"{function} called sys.exit({exc.code!r})")
    except BaseException as exc:  # the student's exception is the answer
        return ("failed", f"your code raised {type(exc).__name__}: {one_line(exc)}")
    return ("ok", value, device.trace())


class _Child:
    """One child process serving one module on one setting's device."""

    def __init__(self, path: Path, name: str, cfg: dict, limit_s: float):
        ctx = _context()
        self.conn, theirs = ctx.Pipe()
        self.proc = ctx.Process(target=_serve, args=(theirs, str(path), name, cfg), daemon=True)
        self.proc.start()
        theirs.close()
        self.broken: StudentFailed | None = None
        kind, message = self._reply(limit_s, f"{name}.py did not finish importing within {limit_s:g} s")
        if kind != "ready":
            self.close()
            self.broken = StudentFailed(message)

    def _reply(self, limit_s: float, late: str):
        if not self.conn.poll(limit_s):
            self.close()
            raise StudentFailed(late)
        try:
            return self.conn.recv()
        except (EOFError, OSError):
            self.proc.join(1.0)
            code = self.proc.exitcode
            self.close()
            raise StudentFailed(f"the process running your code ended (exit code {code})") from None

    def call(self, function: str, args: tuple, kwargs: dict, limit_s: float) -> tuple:
        if self.broken is not None:
            raise self.broken
        self.conn.send((function, args, kwargs))
        reply = self._reply(limit_s, f"{function} did not return within {limit_s:g} s")
        if reply[0] != "ok":
            raise StudentFailed(reply[1])
        return reply[1], reply[2]

    def close(self) -> None:
        if self.proc.is_alive():
            try:
                self.conn.send(None)
            except (OSError, ValueError):
                pass
            self.proc.join(1.0)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join()
        self.conn.close()


class ProcessRunner:
    """judging's runner over the student's files, each setting in a fresh process of its own.

    ``files``: module -> path of the student's file; ``reference(module, function, args, kwargs,
    sim)`` answers for a correct function (the lesson's ``model_reference``). One child is alive
    at a time: the one for the module and setting of the last call, as in the grader. Close it
    with ``close`` (or use the runner as a context manager).
    """

    def __init__(self, files: dict[str, Path], reference: Callable, limit_s: float = LIMIT_S):
        self.files = files
        self._reference = reference
        self.limit_s = limit_s
        self.memo: dict = {}          # the verdicts' shared calls (shared.simgpu.judging.Session)
        self.current: tuple[str, str, _Child] | None = None
        self.failed: dict[str, StudentFailed] = {}   # a function (or module) that hung or crashed
        self.starts = 0

    def _child(self, module: str, sim: dict) -> _Child:
        key = json.dumps(sim, sort_keys=True)
        if self.current is not None and self.current[:2] == (module, key):
            return self.current[2]
        self.close()
        if module not in self.files:
            raise LookupError(f"no {module}.py given")
        try:
            child = _Child(self.files[module], module, sim, self.limit_s)
        except StudentFailed as exc:
            self.failed[module] = exc
            raise
        self.starts += 1
        self.current = (module, key, child)
        return child

    def student_traced(self, module, function, *args, sim, **kwargs):
        for key in (module, f"{module}.{function}"):
            if key in self.failed:
                raise self.failed[key]
        child = self._child(module, sim)
        try:
            return child.call(function, args, kwargs, self.limit_s)
        except StudentFailed as exc:
            if not child.proc.is_alive():      # timed out or crashed: charged once
                self.failed[f"{module}.{function}"] = exc
                self.current = None
            raise

    def student(self, module, function, *args, sim, **kwargs):
        return self.student_traced(module, function, *args, sim=sim, **kwargs)[0]

    def reference(self, module, function, *args, sim, **kwargs):
        return self._reference(module, function, args, kwargs, sim)

    def close(self) -> None:
        if self.current is not None:
            self.current[2].close()
            self.current = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def import_files(paths: dict) -> int:
    """Import each student file (module name -> path) once, on the device as on a GPU machine:
    0, or IMPORT_FAILED after one line on stderr naming the file that does not import. A step
    for ``run_apart``."""
    from shared import simgpu

    prepare()
    for name, path in paths.items():
        try:
            with simgpu.active(simgpu.config()):
                local.import_file(Path(path), name)
        except BaseException as exc:  # SyntaxError, SystemExit, anything at import
            print(f"python -m shared.simgpu: {import_failure(name, exc)}", file=sys.stderr)
            return IMPORT_FAILED
    return 0


def show(lesson: str, paths: dict, cfg: dict, header: str) -> int:
    """Print ``header``, then what lesson ``lesson`` shows of the student's files (module name ->
    path) on the device ``cfg``: 0. A step for ``run_apart``."""
    from shared import lessons

    prepare()
    modules = {name: local.load(Path(path), cfg) for name, path in paths.items()}
    print(header)
    lessons.rubrics()[lesson].show(modules, cfg)
    return 0


def run_apart(step: Callable[..., int], args: tuple, limit_s: float) -> int | None:
    """Run ``step(*args)`` (a module-level function that prints what it has to say) in a process
    of its own; its return value as the exit code, or None when it did not finish within
    ``limit_s`` seconds."""
    proc = _context().Process(target=_run_step, args=(step, args), daemon=True)
    proc.start()
    proc.join(limit_s)
    if proc.is_alive():
        proc.kill()
        proc.join()
        return None
    return proc.exitcode


def _run_step(step, args) -> None:
    _settle_threads()
    try:
        code = step(*args)
    except BaseException as exc:  # the step reports its own errors; this is a last line
        print(f"python -m shared.simgpu: {type(exc).__name__}: {one_line(exc)}", file=sys.stderr)
        code = 1
    _exit(int(code or 0))

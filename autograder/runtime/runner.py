"""The child side of grading: a loop that imports student modules and runs calls, JSON lines only.

The grader starts this file in a fresh isolated interpreter (``python -I -S -B runner.py CONFIG``,
see autograder/sandbox/launch.py) with the submission copied into a private working folder. It reads
one JSON request per line from a dedicated pipe and writes one JSON reply per line to another;
stdin, stdout and stderr belong to the student's code. Nothing here is secret and nothing here
reads grader files: the child needs only autograder/runtime/, the project's ``shared/`` and the venv.

Requests (``id`` is echoed back):
    {"id": 1, "op": "has", "module": "bw"}
        -> {"ok": true, "value": ["copy_bandwidth", ...]}   (public callables of the module)
        -> {"ok": false, "kind": "import", "message": "bw.py does not import: SyntaxError line 3"}
    {"id": 2, "op": "call", "module": "predict", "function": "predict_decode",
     "args": [...], "kwargs": {...}, "sim": null | {...}, "trace": false}
        -> {"ok": true, "value": ..., "trace": {...} | null}
    ``sim``: the public description of a simulated GPU held by the grader (shared.simgpu.profile.
    public). During such a call the child also sends {"dev": [requests], "ask": request?} lines
    (what the CUDA program does) and reads {"dev_reply": ...} | {"dev_error": ...} answers on
    the request pipe (autograder/sandbox/gpuhost.py serves them); the trace is the grader's.
        -> {"ok": false, "kind": "raised", "exc_type": "ValueError", "message": "..."}
        -> {"ok": false, "kind": "exit", "message": "predict_decode called sys.exit(3)"}
        -> {"ok": false, "kind": "missing" | "import" | "protocol", "message": "..."}
At start the child sends {"ready": true, "simgpu": bool} once its heavy imports are done.

Values cross the pipe in plain JSON with tagged objects (``encode``/``decode``, codec.py) for what
JSON lacks: non-finite floats, tuples, dicts with non-string keys, torch dtypes (dtypes.py), arrays,
and matplotlib Figures (turned into plain data by figures.py). Nothing is ever pickled.

This file is the script the sandbox starts (the fork server compiles it once); the request loop is
``Child`` (child.py), and a watched call's aten ops are recorded by ``TorchWatch``
(torchwatch.py). Imported as a module, it gives the grader those names (``runner.encode``,
``runner.Dtype``, ...).
"""
from __future__ import annotations

import importlib
import json
import os
import sys

if __name__ != "__main__":
    # Imported (by the grader, the fork server, the tests): the names other code uses from here,
    # and the child's modules compiled into __pycache__ for the children, which may not write
    # bytecode. Run as the child's script (``python -I -S``), the project root is not on sys.path
    # until ``main`` puts it there, and ``main`` imports the loop then.
    from autograder.runtime.child import MAX_MESSAGE, MAX_REPLY_BYTES, Child
    from autograder.runtime.codec import Array, Opaque, decode, dumps, encode
    from autograder.runtime.dtypes import Dtype
    from autograder.runtime.figures import MAX_POINTS, figure_data
    from autograder.runtime.torchwatch import TorchWatch

__all__ = ["MAX_MESSAGE", "MAX_POINTS", "MAX_REPLY_BYTES", "Array", "Child", "Dtype", "Opaque", "TorchWatch",
           "decode", "dumps", "encode", "figure_data", "main"]


def _apply_limits(limits: dict) -> None:
    """Basic rlimits: address space, file size, CPU seconds, no core files."""
    import resource
    import signal

    def cap(which, value):
        if value is None:
            return
        try:
            resource.setrlimit(which, (int(value), int(value)))
        except (ValueError, OSError):
            pass

    cap(resource.RLIMIT_CORE, 0)
    cap(resource.RLIMIT_AS, limits.get("address_space_bytes"))
    cap(resource.RLIMIT_FSIZE, limits.get("file_size_bytes"))
    cap(resource.RLIMIT_CPU, limits.get("cpu_seconds"))
    # Writing past the file-size limit raises OSError in the student's code instead of killing us.
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)


def _preload(config: dict):
    """Heavy imports paid once per child; the simulated GPU installed before any student import."""
    for name in config.get("preload", []):
        try:
            importlib.import_module(name)
        except Exception:  # the student's own import will report it, one line
            pass
    if not config.get("simgpu", True):
        return None
    try:
        simgpu = importlib.import_module("shared.simgpu")
        simgpu.install()
        simgpu.conceal()        # the student's code finds no simulator module by name
    except Exception as exc:  # no simulator: CPU checks still run, sim calls say why
        print(f"runner: simulated GPU unavailable ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
    return simgpu


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    sys.path[:0] = [p for p in config["path"] if p not in sys.path]
    from autograder.runtime.child import Child  # only now: the project root is on sys.path
    os.environ.setdefault("MPLBACKEND", "Agg")
    _apply_limits(config.get("limits", {}))
    child = Child(config["fd_in"], config["fd_out"])
    child.simgpu = _preload(config)
    # The student's folder (the cwd) comes first, as it does for `python their_script.py`.
    sys.path.insert(0, os.getcwd())
    child.send({"ready": True, "simgpu": child.simgpu is not None})
    while True:
        line = child.reader.readline()
        if not line:
            return 0
        try:
            request = json.loads(line)
        except ValueError:
            child.send({"id": None, "ok": False, "kind": "protocol", "message": "bad request line"})
            continue
        child.send(child.handle(request))


if __name__ == "__main__":
    # Flushed, then os._exit, as a fork server's child ends (sandbox/inprocess.py, run_script): a
    # fresh interpreter's teardown of what the code imported (matplotlib, numpy) takes a quarter
    # of a second, while the grader waits for the child to end before it starts the next.
    status = main(sys.argv)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed or broken stream: nothing left to keep
            pass
    os._exit(status)

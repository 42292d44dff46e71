"""The child side of grading: a loop that imports student modules and runs calls, JSON lines only.

The grader starts this file in a fresh isolated interpreter (``python -I -S -B runner.py CONFIG``,
see autograder/sandbox/parent.py) with the submission copied into a private working folder. It reads
one JSON request per line from a dedicated pipe and writes one JSON reply per line to another;
stdin, stdout and stderr belong to the student's code. Nothing here is secret and nothing here
reads grader files: the child needs only this file, the project's ``shared/`` and the venv.

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
    the request pipe (autograder/gpu/host.py serves them); the trace is the grader's.
        -> {"ok": false, "kind": "raised", "exc_type": "ValueError", "message": "..."}
        -> {"ok": false, "kind": "exit", "message": "predict_decode called sys.exit(3)"}
        -> {"ok": false, "kind": "missing" | "import" | "protocol", "message": "..."}
At start the child sends {"ready": true, "simgpu": bool} once its heavy imports are done.

Values cross the pipe in plain JSON with tagged objects (``encode``/``decode`` below) for what
JSON lacks: non-finite floats, tuples, dicts with non-string keys, torch dtypes, arrays, and
matplotlib Figures (turned into plain data by ``figure_data``). Nothing is ever pickled.
"""
from __future__ import annotations

import importlib
import json
import math
import os
import sys
import traceback

#: Largest reply line in bytes; a bigger value is refused with a one-line error.
MAX_REPLY_BYTES = 8 * 2**20
#: Longest list of points kept per plotted line (the rest is cut; plots need far fewer).
MAX_POINTS = 10_000
#: Longest message text kept from a student's exception, in characters.
MAX_MESSAGE = 500


# --------------------------------------------------------------------------- the codec

class Opaque:
    """A value the child could not turn into data: its type name and a short repr."""

    def __init__(self, type_name: str, text: str):
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.type_name} {self.text}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Opaque) and (self.type_name, self.text) == (other.type_name, other.text)


class Dtype:
    """A torch dtype named without importing torch in the parent (``Dtype('float32')``)."""

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return f"torch.{self.name}"

    def __eq__(self, other) -> bool:
        return isinstance(other, Dtype) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("Dtype", self.name))


class Array:
    """A numpy array or torch tensor that came back from student code: ``kind``, dtype, data."""

    def __init__(self, kind: str, dtype: str, data):
        self.kind = kind
        self.dtype = dtype
        self.data = data

    def __repr__(self) -> str:
        return f"<{self.kind} dtype={self.dtype}>"


def encode(value, _depth: int = 0):
    """``value`` as JSON-ready data; tags what plain JSON would lose or cannot hold."""
    if _depth > 50:
        return {"__opaque__": ["nested", "too deeply nested"]}
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        x = float(value)
        return x if math.isfinite(x) else {"__float__": repr(x)}
    if isinstance(value, tuple):
        return {"__tuple__": [encode(v, _depth + 1) for v in value]}
    if isinstance(value, list):
        return [encode(v, _depth + 1) for v in value]
    if isinstance(value, dict):
        plain = all(isinstance(k, str) and not k.startswith("__") for k in value)
        if plain:  # string keys that cannot be mistaken for a tag stay a JSON object
            return {k: encode(v, _depth + 1) for k, v in value.items()}
        return {"__dict__": [[encode(k, _depth + 1), encode(v, _depth + 1)] for k, v in value.items()]}
    if isinstance(value, Dtype):
        return {"__dtype__": value.name}
    if isinstance(value, Opaque):
        return {"__opaque__": [value.type_name, value.text]}
    return _encode_foreign(value, _depth)


def _encode_foreign(value, depth):
    module = type(value).__module__ or ""
    if module.startswith("numpy"):
        import numpy as np
        if isinstance(value, np.bool_):
            return bool(value)
        if isinstance(value, np.integer):
            return int(value)
        if isinstance(value, np.floating):
            return encode(float(value))
        if isinstance(value, np.ndarray):
            return {"__array__": ["numpy", str(value.dtype), encode(value.tolist(), depth + 1)]}
    if module.startswith("torch"):
        import torch
        if isinstance(value, torch.dtype):
            return {"__dtype__": str(value).removeprefix("torch.")}
        if isinstance(value, torch.Tensor):
            try:
                data = value.detach().cpu().tolist() if value.numel() <= MAX_POINTS else None
            except Exception:  # meta tensors and the like hold no data
                data = None
            return {"__array__": ["torch.Tensor", str(value.dtype).removeprefix("torch."), encode(data, depth + 1)]}
    if module.startswith("matplotlib"):
        from matplotlib.figure import Figure
        if isinstance(value, Figure):
            return {"__figure__": encode(figure_data(value), depth + 1)}
    try:
        text = repr(value)
    except Exception:
        text = "(repr failed)"
    return {"__opaque__": [f"{module}.{type(value).__qualname__}".lstrip("."), text[:200]]}


def decode(data):
    """The inverse of ``encode``: tagged objects back to Python values (never code)."""
    if isinstance(data, list):
        return [decode(v) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) == 1:
        (tag, body), = data.items()
        if tag == "__float__":
            return float(body)  # 'inf', '-inf' or 'nan' only: float() of any other text raises
        if tag == "__tuple__":
            return tuple(decode(v) for v in body)
        if tag == "__dict__":
            return {_key(decode(k)): decode(v) for k, v in body}
        if tag == "__dtype__":
            return Dtype(str(body))
        if tag == "__array__":
            kind, dtype, values = body
            return Array(str(kind), str(dtype), decode(values))
        if tag == "__figure__":
            return decode(body)
        if tag == "__opaque__":
            return Opaque(str(body[0]), str(body[1]))
    return {k: decode(v) for k, v in data.items()}


def _key(k):
    return tuple(k) if isinstance(k, list) else k


def dumps(message: dict) -> bytes:
    """One protocol line: JSON with no NaN/Infinity literals, newline-terminated."""
    return (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")


# ------------------------------------------------------------------- figures as data

def figure_data(fig) -> dict:
    """A matplotlib Figure as plain data: per Axes its scales, labels, lines, points and texts.

    Returns ``{"axes": [{"xscale", "yscale", "xlabel", "ylabel", "title", "lines": [{"label",
    "x", "y", "marker", "linestyle"}], "collections": [{"label", "offsets"}], "texts": [{"text",
    "xy"}], "legend": [labels]}]}``; x and y are lists of floats in data coordinates.
    """
    axes = []
    for ax in fig.get_axes():
        lines = []
        for line in ax.get_lines():
            xs, ys = line.get_xdata(orig=True), line.get_ydata(orig=True)
            lines.append({
                "label": str(line.get_label()),
                "x": _floats(xs), "y": _floats(ys),
                "marker": str(line.get_marker()) if line.get_marker() not in (None, "None", "none", "") else "",
                "linestyle": str(line.get_linestyle()),
            })
        collections = []
        for coll in ax.collections:
            try:
                offsets = [[float(a), float(b)] for a, b in list(coll.get_offsets())[:MAX_POINTS]]
            except Exception:
                offsets = []
            collections.append({"label": str(coll.get_label()), "offsets": offsets})
        texts = []
        for text in ax.texts:
            xy = getattr(text, "xy", None)
            if xy is None:
                xy = text.get_position()
            try:
                pair = [float(xy[0]), float(xy[1])]
            except (TypeError, ValueError, IndexError):
                pair = None
            texts.append({"text": str(text.get_text()), "xy": pair})
        legend = ax.get_legend()
        axes.append({
            "xscale": ax.get_xscale(), "yscale": ax.get_yscale(),
            "xlabel": ax.get_xlabel(), "ylabel": ax.get_ylabel(), "title": ax.get_title(),
            "lines": lines, "collections": collections, "texts": texts,
            "legend": [t.get_text() for t in legend.get_texts()] if legend is not None else [],
        })
    return {"axes": axes}


def _floats(values) -> list:
    out = []
    for v in list(values)[:MAX_POINTS]:
        try:
            out.append(float(v))
        except (TypeError, ValueError):
            out.append(math.nan)
    return out


# ------------------------------------------------------------------------- the child

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

    def attach(self, request: dict):
        """The frontend of the session ``request`` names (entering it, leaving any other), or None."""
        sim, token = request.get("sim"), request.get("session")
        if sim is None or self.simgpu is None:
            self.detach()                     # a request without a device runs without one
            return None
        if self.session is not None and self.session[0] == token:
            return self.session[2]
        self.detach()
        from shared.simgpu.frontend import PipeLink
        context = self.simgpu.attach(sim, PipeLink(self.send, self.reader.readline))
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
        args, kwargs = _to_torch(args), _to_torch(kwargs)
        sim = request.get("sim")
        trace = None
        try:
            if request.get("watch") and sim is None:
                with TorchWatch() as watch:
                    value = fn(*args, **kwargs)
                encoded = encode(value)
                trace = {"torch_ops": watch.summary()}
            elif sim is not None:
                if frontend is None:
                    return {"id": rid, "ok": False, "kind": "protocol",
                            "message": "the simulated GPU (shared.simgpu) is not available in this checkout"}
                # The device lives in the grader's process: ``sim`` is only its public description,
                # and every request goes over the pipes (shared/simgpu/frontend.py, PipeLink).
                value = fn(*args, **kwargs)
                encoded = encode(value)
            else:
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


def TorchWatch():
    """A context manager recording the torch calls made inside it (see ``_make_watch``)."""
    return _make_watch()()


def _make_watch():
    """The TorchFunctionMode class behind TorchWatch (built on first use: torch loads lazily).

    ``summary()`` lists ``{"op", "shapes", "dtypes", "nbytes", "out_nbytes", "count"}`` per distinct
    call: the function's name, the shapes, dtypes and sizes in bytes of its tensor arguments, the
    size of a tensor result, and how many times it was called. It lets a CPU check see that
    ``matmul_tflops(96, dtype=torch.float64)`` multiplied 96 x 96 float64 matrices.
    """
    import torch
    from torch.overrides import TorchFunctionMode

    class _Watch(TorchFunctionMode):
        def __init__(self):
            super().__init__()
            self.counts: dict = {}

        def __torch_function__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            if len(self.counts) < 2000:
                tensors = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
                out = result.nbytes if isinstance(result, torch.Tensor) else None
                key = (getattr(func, "__name__", str(func)),
                       tuple(tuple(t.shape) for t in tensors),
                       tuple(str(t.dtype).removeprefix("torch.") for t in tensors),
                       tuple(int(t.nbytes) for t in tensors), out)
                self.counts[key] = self.counts.get(key, 0) + 1
            return result

        def summary(self) -> list:
            return [{"op": op, "shapes": [list(s) for s in shapes], "dtypes": list(dtypes),
                     "nbytes": list(nbytes), "out_nbytes": out, "count": count}
                    for (op, shapes, dtypes, nbytes, out), count in self.counts.items()]

    return _Watch


def _to_torch(value):
    """Turn Dtype markers into torch dtypes (torch is imported only when one is present)."""
    if isinstance(value, Dtype):
        import torch
        return getattr(torch, value.name)
    if isinstance(value, list):
        return [_to_torch(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_to_torch(v) for v in value)
    if isinstance(value, dict):
        return {k: _to_torch(v) for k, v in value.items()}
    return value


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
    except Exception as exc:  # no simulator: CPU checks still run, sim calls say why
        print(f"runner: simulated GPU unavailable ({type(exc).__name__}: {exc})", file=sys.stderr)
        return None
    return simgpu


def main(argv: list[str]) -> int:
    config = json.loads(argv[1])
    sys.path[:0] = [p for p in config["path"] if p not in sys.path]
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
    # Flushed, then os._exit, as a fork server's child ends (sandbox/jail.py, _run_script): a
    # fresh interpreter's teardown of what the code imported (matplotlib, numpy) takes a quarter
    # of a second, while the grader waits for the child to end before it starts the next.
    status = main(sys.argv)
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # a closed or broken stream: nothing left to keep
            pass
    os._exit(status)

"""Values across the child's pipes as plain JSON, with tagged objects for what JSON lacks.

Non-finite floats, tuples, dicts with non-string keys, torch dtypes (``Dtype``), numpy arrays and
torch tensors (``Array``), matplotlib Figures (turned into plain data by ``figures.figure_data``)
and anything else (``Opaque``: its type and a short repr). Nothing is ever pickled, and ``decode``
builds values, never code. The grader and the sandboxed child both use it (the protocol is in
autograder/runtime/runner.py); numpy, torch and matplotlib are imported only to encode a value of
theirs. ``MAX_POINTS`` (figures.py) also bounds the tensors whose data comes back.
"""
from __future__ import annotations

import json
import math

from autograder.runtime.dtypes import Dtype
from autograder.runtime.figures import MAX_POINTS, figure_data


class Opaque:
    """A value the child could not turn into data: its type name and a short repr."""

    def __init__(self, type_name: str, text: str):
        self.type_name = type_name
        self.text = text

    def __repr__(self) -> str:
        return f"<{self.type_name} {self.text}>"

    def __eq__(self, other) -> bool:
        return isinstance(other, Opaque) and (self.type_name, self.text) == (other.type_name, other.text)


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


def decode(data, spend=None):
    """The inverse of ``encode``: tagged objects back to Python values (never code). ``spend``,
    when given, is called once per value before it is built and may raise to stop the decoding
    (the grader's budget for a child's reply: autograder/sandbox/replies.py)."""
    if spend is not None:
        spend()
    if isinstance(data, list):
        return [decode(v, spend) for v in data]
    if not isinstance(data, dict):
        return data
    if len(data) == 1:
        (tag, body), = data.items()
        if tag == "__float__":
            return float(body)  # 'inf', '-inf' or 'nan' only: float() of any other text raises
        if tag == "__tuple__":
            return tuple(decode(v, spend) for v in body)
        if tag == "__dict__":
            return {_key(decode(k, spend)): decode(v, spend) for k, v in body}
        if tag == "__dtype__":
            return Dtype(str(body))
        if tag == "__array__":
            kind, dtype, values = body
            return Array(str(kind), str(dtype), decode(values, spend))
        if tag == "__figure__":
            return decode(body, spend)
        if tag == "__opaque__":
            return Opaque(str(body[0]), str(body[1]))
    return {k: decode(v, spend) for k, v in data.items()}


def _key(k):
    return tuple(k) if isinstance(k, list) else k


def dumps(message: dict) -> bytes:
    """One protocol line: JSON with no NaN/Infinity literals, newline-terminated."""
    return (json.dumps(message, allow_nan=False, separators=(",", ":")) + "\n").encode("utf-8")

"""The torch calls a student function made, recorded while it runs (``TorchWatch``).

The sandboxed child uses it for a call the grader asks to watch (autograder/runtime/child.py), the
real-GPU tier in its own child (autograder/lessons/why17/realgpu_pair.py). torch is imported on
first use.
"""
from __future__ import annotations


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

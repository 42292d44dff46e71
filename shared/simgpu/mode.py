"""The TorchFunctionMode that puts 'cuda' tensors on the simulated device.

Every torch call passes through ``SimMode.__torch_function__``: 'cuda' devices become 'meta'
(shape and dtype, no data, no real allocation), the result is accounted on the SimDevice
(allocation, kernel time), and calls that need a value on the host wait for the device and
return zeros, since simulated tensors hold no values. ``tensor.device`` reports 'cuda:0'.
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from shared.simgpu import costs

CUDA0 = torch.device("cuda", 0)
META = torch.device("meta")

#: Calls that hand a value to the host: they wait for the device first.
HOST_READS = frozenset({"item", "tolist", "numpy", "__repr__", "__str__", "__format__", "__bool__",
                        "__float__", "__int__", "__index__", "__complex__", "equal", "allclose",
                        "__array__", "is_nonzero"})


#: ``*_like`` factories taken through their plain factory (see SimMode._like).
LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like"})


def is_sim(t) -> bool:
    """Whether ``t`` is a tensor on the simulated device (a meta tensor)."""
    return isinstance(t, torch.Tensor) and t.device.type == "meta"


def is_cuda_like(d) -> bool:
    """Whether a device argument names CUDA: 'cuda', 'cuda:0', torch.device('cuda'), 0, or meta."""
    if isinstance(d, torch.device):
        return d.type in ("cuda", "meta")
    if isinstance(d, str):
        return d.split(":")[0].strip() in ("cuda", "meta")
    return isinstance(d, int) and not isinstance(d, bool)


def is_cpu_like(d) -> bool:
    return (isinstance(d, torch.device) and d.type == "cpu") or (isinstance(d, str) and d.split(":")[0] == "cpu")


def _flat(values, out: list) -> list:
    for v in values:
        if isinstance(v, torch.Tensor):
            out.append(v)
        elif isinstance(v, (list, tuple)):
            _flat(v, out)
    return out


def _name(func) -> str:
    return getattr(func, "__name__", "") or ""


def _matmul_result(name, args, kwargs):
    """The (empty) result of a matmul of simulated tensors, shaped without torch's Python meta
    kernel (whose first call imports sympy, about half a second); None to let torch do it."""
    if kwargs or len(args) < 2 or not all(is_sim(t) for t in args[:3] if isinstance(t, torch.Tensor)):
        return None
    a, b = (args[1], args[2]) if name == "addmm" and len(args) >= 3 else (args[0], args[1])
    if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or a.dtype != b.dtype:
        return None
    if name == "linear":
        if len(args) > 2 or b.dim() != 2 or a.dim() < 1 or a.shape[-1] != b.shape[1]:
            return None
        shape = (*a.shape[:-1], b.shape[0])
    elif name in ("mm", "addmm", "matmul", "__matmul__", "bmm"):
        if a.dim() < 2 or a.dim() != b.dim() or a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
            return None
        if (name in ("mm", "addmm") and a.dim() != 2) or (name == "bmm" and a.dim() != 3):
            return None
        if name == "addmm" and (len(args) > 3 or args[0].shape != (a.shape[0], b.shape[1])):
            return None
        shape = (*a.shape[:-1], b.shape[-1])
    else:
        return None
    return torch.empty(shape, dtype=a.dtype, device=META)


#: Host copies of simulated tensors up to this many bytes are filled with zeros; larger ones are
#: left as the allocator hands them out (fresh pages, which read as zeros): writing hundreds of
#: MiB of zeros per copy would cost the student's call real seconds a real GPU never spends.
ZERO_FILL_BYTES = 2**20


def host_zeros(shape, dtype):
    """A CPU tensor standing for a simulated tensor's values copied to the host."""
    t = torch.empty(shape, dtype=dtype)
    if t.numel() * t.element_size() <= ZERO_FILL_BYTES:
        t.zero_()
    return t


def dispatch_watched() -> bool:
    """Whether a TorchDispatchMode is active or the profiler records: operations must then reach
    the dispatcher (the shortcuts below skip it)."""
    return torch._C._len_torch_dispatch_stack() > 0 or torch.autograd._profiler_enabled()


class SimMode(TorchFunctionMode):
    """Routes CUDA work of every torch call to ``device`` (a SimDevice)."""

    def __init__(self, device):
        super().__init__()
        self.device = device

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        name = _name(func)
        if name == "__get__":
            return self._property(func, args, kwargs)
        self_t = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if name in HOST_READS and any(is_sim(t) for t in _flat(list(args) + list(kwargs.values()), [])):
            return self._host_read(name, func, args, kwargs)
        if name in ("to", "cuda", "cpu") and self_t is not None:
            moved = self._move(name, func, args, kwargs)
            if moved is not NotImplemented:
                return moved
        if name == "copy_" and self_t is not None and len(args) > 1 and isinstance(args[1], torch.Tensor):
            if is_sim(self_t) and is_sim(args[1]) and costs.same_data(self_t, args[1]):
                return self_t                  # PyTorch skips a copy onto itself: no kernel
            if not is_sim(self_t) and is_sim(args[1]):          # a device-to-host copy
                self.device.host_read()
                self.device.transfer("d2h", costs.nbytes(args[1]))
                return self_t
            if is_sim(self_t) and not is_sim(args[1]) and args[1].numel() > 1:   # host-to-device
                self.device.transfer("h2d", costs.nbytes(args[1]))
                return self_t
        if name == "pin_memory" and self_t is not None:
            return self_t                      # page-locking needs a real CUDA driver
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        if "device" in kwargs and is_cuda_like(kwargs["device"]):
            kwargs["device"] = META
        out_kw = kwargs.get("out")
        inputs = [t for t in _flat(list(args) + [v for k, v in kwargs.items() if k != "out"], []) if is_sim(t)]
        # Shortcuts that shape a result without dispatching: only when nothing watches the
        # dispatcher (FlopCounterMode, a user's TorchDispatchMode, the profiler), which must see
        # every operation on this device as on any other.
        watched = dispatch_watched()
        out = None if watched else self._like(name, args, kwargs)
        if out is None and name in costs.MATMUL and not watched:
            out = _matmul_result(name, args, kwargs)
        if (out is None and name in ("randn", "rand") and args and kwargs.get("device") == META
                and not watched and set(kwargs) <= {"dtype", "device", "requires_grad", "generator"}):
            # no values to draw: the same meta tensor without torch's Python reference path
            out = torch.empty(*args, dtype=kwargs.get("dtype"), device=META,
                              requires_grad=bool(kwargs.get("requires_grad", False)))
        if out is None:
            out = func(*args, **kwargs)
        outputs = [t for t in _flat([out], []) if is_sim(t)]
        if out_kw is not None and not outputs:
            outputs = [t for t in _flat([out_kw], []) if is_sim(t)]
        if not inputs and not outputs:
            return out
        new = [t for t in outputs if not self.device.memory.known(t)]
        for t in outputs:
            self.device.track(t, new=any(t is n for n in new))
        op = costs.classify(name, args, inputs, outputs, bool(new) or out_kw is not None)
        if op is not None:
            self.device.launch(op)
        return out

    # ------------------------------------------------------------------ helpers
    @staticmethod
    def _like(name, args, kwargs):
        """``empty_like(t)`` and kin on a contiguous simulated tensor, through the plain factory.

        Same result; it skips torch's Python reference path for meta tensors, whose first call
        imports sympy (about half a second of CPU).
        """
        if name not in LIKE or not args or not is_sim(args[0]) or not args[0].is_contiguous():
            return None
        if set(kwargs) - {"dtype", "device", "requires_grad"} or kwargs.get("device", META) != META:
            return None
        t = args[0]
        extra = list(args[1:])
        if len(extra) != (1 if name == "full_like" else 0):
            return None
        factory = getattr(torch, name.removesuffix("_like"))
        if name in ("rand_like", "randn_like"):
            factory = torch.empty                  # no values to draw on the simulated device
        return factory(t.shape, *extra, dtype=kwargs.get("dtype") or t.dtype, device=META,
                       requires_grad=bool(kwargs.get("requires_grad", False)))

    def _property(self, func, args, kwargs):
        prop = getattr(getattr(func, "__self__", None), "__name__", "")
        out = func(*args, **kwargs)
        if prop == "device" and isinstance(out, torch.device) and out.type == "meta":
            return CUDA0
        if prop == "is_cuda" and args and is_sim(args[0]):
            return True
        if prop == "is_meta" and args and is_sim(args[0]):
            return False
        return out

    def _host_read(self, name, func, args, kwargs):
        self.device.host_read()
        t = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if name in ("equal", "allclose", "__bool__", "is_nonzero"):
            return True          # no values to compare: sanity asserts on simulated data pass
        if name == "__format__" and t is not None and t.numel() == 1:
            return format(torch.zeros((), dtype=t.dtype).item(), args[1] if len(args) > 1 else "")
        if name in ("__repr__", "__str__", "__format__"):
            return (f"tensor(<simulated, no values>, size={tuple(t.shape)}, device='cuda:0', "
                    f"dtype={t.dtype})") if t is not None else "<simulated>"
        zeros = torch.zeros(t.shape, dtype=t.dtype) if t is not None else torch.zeros(())
        if name == "tolist":
            return zeros.tolist()
        if name in ("numpy", "__array__"):
            return zeros.numpy()
        if name == "__complex__":
            return complex(0)
        if name in ("__int__", "__index__"):
            return 0
        return zeros.item() if zeros.numel() == 1 else 0.0

    def _move(self, name, func, args, kwargs):
        """``.to(...)``, ``.cuda()``, ``.cpu()``: between host and device, or within the device."""
        src = args[0]
        kwargs = dict(kwargs)
        target = None
        rest = list(args[1:])
        if name == "cuda":
            target = CUDA0
            rest = []
            kwargs.pop("device", None)
        elif name == "cpu":
            target = torch.device("cpu")
        else:
            for i, a in enumerate(rest):
                if isinstance(a, torch.Tensor):
                    target = CUDA0 if is_sim(a) else a.device
                    rest[i] = a.dtype
                    break
                if isinstance(a, (str, torch.device, int)) and not isinstance(a, bool):
                    target = a
                    rest.pop(i)
                    break
            if "device" in kwargs:
                target = kwargs.pop("device")
        if target is None:
            return NotImplemented
        dtype = next((a for a in rest if isinstance(a, torch.dtype)), kwargs.get("dtype", src.dtype))
        if is_cuda_like(target):
            if is_sim(src):
                if dtype == src.dtype and not kwargs.get("copy", False):
                    return src
                out = src.to(dtype=dtype)
                self.device.track(out, new=True)
                self.device.launch(costs.Op("copy", reads=[src], writes=[out], dtype=dtype))
                return out
            out = torch.empty(src.shape, dtype=dtype, device=META)
            self.device.track(out, new=True)
            self.device.transfer("h2d", costs.nbytes(src))
            return out
        if is_cpu_like(target) and is_sim(src):
            self.device.host_read()
            self.device.transfer("d2h", costs.nbytes(src))
            return host_zeros(src.shape, dtype)
        return NotImplemented

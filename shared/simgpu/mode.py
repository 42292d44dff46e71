"""The TorchFunctionMode that puts 'cuda' tensors on the simulated device.

Every torch call passes through ``SimMode.__torch_function__``: 'cuda' devices become 'meta'
(shape and dtype, no data, no real allocation), copies between host and device cross the host
link, and calls that need a value on the host wait for the device and return zeros, since
simulated tensors hold no values. ``tensor.device`` reports 'cuda:0'. What each call costs the
device is decided beneath, at torch's dispatcher (dispatch.py), op by op.
"""
from __future__ import annotations

import torch
from torch.overrides import TorchFunctionMode

from shared.simgpu import autocast, costs, state

CUDA0 = torch.device("cuda", 0)
META = torch.device("meta")

#: Calls that hand a value to the host: they wait for the device first.
HOST_READS = frozenset({"item", "tolist", "numpy", "__repr__", "__str__", "__format__", "__bool__",
                        "__float__", "__int__", "__index__", "__complex__", "equal", "allclose",
                        "__array__", "is_nonzero"})


#: ``*_like`` factories taken through their plain factory (see SimMode._like).
LIKE = frozenset({"empty_like", "zeros_like", "ones_like", "rand_like", "randn_like", "full_like"})


def is_sim(t) -> bool:
    """Whether ``t`` is a tensor on the simulated device (a meta tensor). ``is_meta`` is read, not
    ``device``, which builds a torch.device object each time (a launch asks this several times)."""
    return isinstance(t, torch.Tensor) and t.is_meta


def is_cuda_like(d) -> bool:
    """Whether a device argument names CUDA: 'cuda', 'cuda:0', torch.device('cuda'), 0, or meta."""
    if isinstance(d, torch.device):
        return d.type in ("cuda", "meta")
    if isinstance(d, str):
        return d.split(":")[0].strip() in ("cuda", "meta")
    return isinstance(d, int) and not isinstance(d, bool)


#: torch's legacy tensor type names ('torch.cuda.<name>Tensor') and their dtypes.
LEGACY_TYPES = {"Float": torch.float32, "Double": torch.float64, "Half": torch.float16,
                "BFloat16": torch.bfloat16, "Byte": torch.uint8, "Char": torch.int8,
                "Short": torch.int16, "Int": torch.int32, "Long": torch.int64, "Bool": torch.bool,
                "ComplexFloat": torch.complex64, "ComplexDouble": torch.complex128}

#: What CUDA answers when a program names a device the machine does not have (one GPU here).
INVALID_ORDINAL = ("CUDA error: invalid device ordinal\nCUDA kernel errors might be asynchronously "
                   "reported at some other API call, so the stacktrace below might be incorrect.\n"
                   "For debugging consider passing CUDA_LAUNCH_BLOCKING=1")


def ordinal(d) -> int | None:
    """The device index a CUDA device argument names (None: the current device)."""
    if isinstance(d, torch.device):
        return d.index
    if isinstance(d, str):
        return torch.device(d).index
    return d if isinstance(d, int) and not isinstance(d, bool) else None


def check_ordinal(d) -> None:
    """RuntimeError as CUDA's for a device index other than 0: the simulated machine has one GPU."""
    if ordinal(d) not in (None, 0):
        raise RuntimeError(INVALID_ORDINAL)


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


def _repr(t: torch.Tensor) -> str:
    """torch's own printing of a CUDA tensor of zeros (its values on the host; summarized when
    large, as torch does, from an expanded scalar: no memory)."""
    text = repr(torch.zeros((), dtype=t.dtype).expand(t.shape))
    head, sep, tail = text.rpartition(", dtype=")
    if not sep:
        return text[:-1] + ", device='cuda:0')"
    return f"{head}, device='cuda:0', dtype={tail}"


class SimMode(TorchFunctionMode):
    """Routes CUDA work of every torch call to the process's simulated device (state.current());
    without one, calls run as they would."""

    @property
    def device(self):
        return state.current()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = dict(kwargs or {})
        if self.device is None:
            return func(*args, **kwargs)
        before = autocast.enter()
        try:
            return self._call(func, args, kwargs)
        finally:
            autocast.leave(before)

    def _call(self, func, args, kwargs):
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
            to_sim, from_sim = self_t.is_meta, args[1].is_meta
            if to_sim and from_sim and costs.same_data(self_t, args[1]):
                return self_t                  # PyTorch skips a copy onto itself: no kernel
            if not to_sim and from_sim:        # a device-to-host copy
                self.device.host_read()
                self.device.transfer("d2h", costs.nbytes(args[1]))
                return self_t
            if to_sim and not from_sim and args[1].numel() > 1:   # host-to-device
                self.device.transfer("h2d", costs.nbytes(args[1]))
                return self_t
        if name == "data_ptr" and self_t is not None and is_sim(self_t):
            return self.device.memory.address(self_t)
        if name == "pin_memory" and self_t is not None:
            return self_t                      # page-locking needs a real CUDA driver
        if kwargs.get("pin_memory"):
            kwargs["pin_memory"] = False
        if "device" in kwargs and is_cuda_like(kwargs["device"]):
            check_ordinal(kwargs["device"])
            kwargs["device"] = META
        if name == "type" and self_t is not None and is_sim(self_t):
            return self._type(func, args, kwargs)
        out = self._like(name, args, kwargs)
        return func(*args, **kwargs) if out is None else out

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

    @staticmethod
    def _type(func, args, kwargs):
        """``t.type()`` names a CUDA tensor type ('torch.cuda.FloatTensor'); a CUDA type name
        given converts on the device."""
        wanted = args[1] if len(args) > 1 else kwargs.get("dtype")
        if isinstance(wanted, str) and wanted.startswith("torch.cuda.") and wanted.endswith("Tensor"):
            dtype = LEGACY_TYPES.get(wanted[len("torch.cuda."):-len("Tensor")])
            if dtype is None:
                raise ValueError(f"invalid type: {wanted!r}")
            return args[0].to(dtype)
        out = func(*args, **kwargs)
        return out.replace("torch.meta.", "torch.cuda.", 1) if isinstance(out, str) else out

    def _host_read(self, name, func, args, kwargs):
        self.device.host_read()
        t = args[0] if args and isinstance(args[0], torch.Tensor) else None
        if name in ("equal", "allclose", "__bool__", "is_nonzero"):
            return True          # no values to compare: sanity asserts on simulated data pass
        if name == "__format__" and t is not None and t.numel() == 1:
            return format(torch.zeros((), dtype=t.dtype).item(), args[1] if len(args) > 1 else "")
        if name in ("__repr__", "__str__", "__format__"):
            return _repr(t) if t is not None else "tensor([], device='cuda:0')"
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
            check_ordinal(target)
            if is_sim(src):
                if dtype == src.dtype and not kwargs.get("copy", False):
                    return src
                return src.to(dtype=dtype, copy=True)      # a kernel, costed at the dispatcher
            out = torch.empty(src.shape, dtype=dtype, device=META)
            self.device.transfer("h2d", costs.nbytes(src))
            return out
        if is_cpu_like(target) and is_sim(src):
            self.device.host_read()
            self.device.transfer("d2h", costs.nbytes(src))
            return host_zeros(src.shape, dtype)
        return NotImplemented

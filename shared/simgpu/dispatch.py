"""The simulated device at torch's dispatcher: every aten op on its tensors is a kernel, costed by
what it reads, writes and computes, however the Python spelled it.

``SimDispatch`` is a TorchDispatchMode beneath the function mode (mode.py, which turns 'cuda' into
'meta' and answers host reads). Whatever a Python call decomposes into (``torch.einsum`` into
views and a ``bmm``, ``addmm_``, ``linalg.multi_dot`` into ``mm``s, ``x[:] = y`` into ``copy_``),
each aten op that reaches it is one kernel:

- FLOPs from torch's own FLOP registry (``torch.utils.flop_counter``, what ``FlopCounterMode``
  counts), bytes from the sizes of the tensors it reads and writes;
- a view (its result aliases an input) and an allocation launch nothing;
- the kind the trace names (shared.simgpu.window) follows from the op: FLOPs in the registry, a
  matmul; a seeded op, a random fill; no tensor read, a fill; torch's ``reduction`` and
  ``pointwise`` tags; anything else that reads one tensor and writes another, a copy.

Tensors on the device hold no values, so ops whose only effect is on values skip their meta
kernel (in-place ops return their target; random factories only allocate): some meta kernels are
Python and import sympy or torch._dynamo on first use, seconds a real GPU never spends.
"""
from __future__ import annotations

import threading

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils.flop_counter import flop_registry

from shared.simgpu import autocast, costs, state

#: Whether the calling thread has used the device (its first op makes the context current there).
_thread_uses = threading.local()

META = torch.device("meta")
#: aten ops that only allocate (their memory holds whatever was there), or view: no kernel runs.
ALLOCATE = frozenset({"empty", "empty_strided", "new_empty", "new_empty_strided", "empty_permuted",
                      "empty_like", "resize_", "set_", "lift_fresh", "detach_", "record_stream",
                      # a view whose schema does not mark its result as an alias (matmul folds a
                      # batch of one into mm with it): no kernel, as any other view
                      "_unsafe_view"})
_COMPOSITE = torch._C.DispatchKey.CompositeImplicitAutograd
_TAG_INPLACE, _TAG_SEEDED = torch.Tag.inplace, torch.Tag.nondeterministic_seeded
#: FLOPs counted so far, by op and argument shapes (``_flops``); at most this many kept.
_FLOPS_SEEN: dict = {}
MAX_FLOPS_SEEN = 4096


def _is_sim(t) -> bool:
    return isinstance(t, torch.Tensor) and t.is_meta


def _tensors(value, out: list) -> list:
    if isinstance(value, torch.Tensor):
        out.append(value)
    elif isinstance(value, (list, tuple)):
        for v in value:
            _tensors(v, out)
    return out


def _any_sim(values) -> bool:
    """Whether any tensor in ``values`` (nested lists and tuples) is on the simulated device."""
    for v in values:
        if isinstance(v, torch.Tensor):
            if v.is_meta:
                return True
        elif isinstance(v, (list, tuple)) and _any_sim(v):
            return True
    return False


class _Facts:
    """What an aten op's schema, tags and registrations say, derived once per op (OverloadOp):
    a timed loop sends the same few ops thousands of times."""

    __slots__ = ("name", "silent", "arguments", "composite", "tags", "inplace", "seeded",
                 "reduction", "pointwise", "inplace_view", "count", "returns", "default")

    def __init__(self, func):
        schema = func._schema
        self.name = func._overloadpacket.__name__
        #: an allocation or a view: no kernel
        self.silent = self.name in ALLOCATE or any(
            r.alias_info is not None and not r.alias_info.is_write for r in schema.returns)
        #: (name, written) of each schema argument, in order
        self.arguments = tuple((a.name, a.alias_info is not None and a.alias_info.is_write)
                               for a in schema.arguments)
        self.composite = torch._C._dispatch_has_kernel_for_dispatch_key(func.name(), _COMPOSITE)
        tags = func.tags
        self.tags = tags
        self.inplace, self.seeded = _TAG_INPLACE in tags, _TAG_SEEDED in tags
        self.reduction, self.pointwise = torch.Tag.reduction in tags, torch.Tag.pointwise in tags
        self.inplace_view = torch.Tag.inplace_view in tags
        self.returns = len(schema.returns)
        self.default = func._overloadname == "default"
        packet = func._overloadpacket
        count = flop_registry.get(packet)
        if count is None and self.name.endswith("_"):    # an in-place op counts as its twin
            twin = getattr(torch.ops.aten, self.name[:-1], None)
            count = flop_registry.get(twin) if twin is not None else None
        self.count = count


_FACTS: dict = {}


def _facts(func) -> _Facts:
    facts = _FACTS.get(func)
    if facts is None:
        facts = _FACTS[func] = _Facts(func)
    return facts


def _arguments(facts: _Facts, args, kwargs) -> list:
    """(written, value) for each argument the call passed."""
    out = []
    for i, (name, written) in enumerate(facts.arguments):
        if i < len(args):
            out.append((written, args[i]))
        elif name in kwargs:
            out.append((written, kwargs[name]))
    return out


def _shapes(value):
    """``value`` with each tensor replaced by its shape, as torch's FLOP registry sees it; a
    TypeError for a value that cannot be a memo key."""
    if isinstance(value, torch.Tensor):
        return (torch.Tensor, value.shape)     # a torch.Size: a tuple, hashed and compared as one
    if isinstance(value, (list, tuple)):
        return tuple(_shapes(v) for v in value)
    hash(value)
    return value


def _flops(facts: _Facts, args, kwargs, out) -> float:
    """FLOPs of the op by torch's registry (an in-place op counts as its out-of-place twin),
    remembered by the shapes and other arguments the registry reads (its pytree walk is a third
    of a small matmul's cost, and a timed loop repeats one op)."""
    if facts.count is None:
        return 0.0
    try:
        key = (facts, _shapes(args), _shapes(tuple(sorted(kwargs.items()))), _shapes(out))
    except TypeError:            # an argument no memo can key: counted afresh
        key = None
    if key is not None and key in _FLOPS_SEEN:
        return _FLOPS_SEEN[key]
    try:
        flops = float(facts.count(*args, **kwargs, out_val=out))
    except (TypeError, ValueError, IndexError, RuntimeError):
        flops = 0.0
    if key is not None:
        if len(_FLOPS_SEEN) >= MAX_FLOPS_SEEN:
            _FLOPS_SEEN.clear()
        _FLOPS_SEEN[key] = flops
    return flops


def _operands(passed: list, out, keep) -> tuple[list, list]:
    """(written, read): the tensors an op writes that ``keep`` accepts (its arguments marked
    written in its schema, else its results), and every tensor among its other arguments."""
    written, read = [], []
    for is_written, value in passed:
        if is_written:
            written += [t for t in _tensors(value, []) if keep(t)]
        else:
            _tensors(value, read)
    if not written:
        written = [t for t in _tensors(out, []) if keep(t)]
    return written, read


def effects(func, args, kwargs, out) -> tuple[str, list, list, float] | None:
    """What one aten op did on any device, as the simulated device costs it: (the op's name, the
    tensors it read, the tensors it wrote, its FLOPs by torch's registry), or None for a view or
    an allocation, which launch no kernel. A grader's record of a call's work uses it (CPU)."""
    facts = _facts(func)
    if facts.silent:
        return None
    written, read = _operands(_arguments(facts, args, kwargs), out, lambda t: True)
    return facts.name, read, written, _flops(facts, args, kwargs, out)


def is_composite(func) -> bool:
    """Whether the aten op is made of others (its parts reach a mode when it is decomposed)."""
    return _facts(func).composite


def kernel(func, args, kwargs, out, passed: list | None = None) -> costs.Op | None:
    """The kernel behind one aten op on the simulated device, or None when it launches none
    (``passed``: ``_arguments`` of the call, when the caller has them)."""
    facts = _facts(func)
    if facts.silent:
        return None
    written, read = _operands(_arguments(facts, args, kwargs) if passed is None else passed, out, _is_sim)
    if not written:
        return None
    sim_read = [t for t in read if _is_sim(t)]
    dtype = written[0].dtype
    flops = _flops(facts, args, kwargs, out)
    if flops > 0:
        reads = sim_read + (written if facts.inplace else [])
        return costs.Op("matmul", reads=reads, writes=written[:1], flops=flops, dtype=sim_read[0].dtype
                        if sim_read else dtype)
    if facts.seeded:
        return costs.Op("random", reads=sim_read, writes=written, dtype=dtype)
    if not sim_read:
        return costs.Op("fill", writes=written, dtype=dtype)
    if facts.reduction:
        return costs.Op("reduction", reads=sim_read, writes=written, flops=_elements(sim_read, written), dtype=dtype)
    if facts.pointwise and facts.name != "clone":    # clone is tagged pointwise: it is a copy
        if not facts.inplace and _one_to_one(sim_read, written):
            # b = q * a (STREAM's Scale), a + 0: one buffer read, another of its size written,
            # which moves the bytes a copy moves
            return costs.Op("copy", reads=sim_read, writes=written, dtype=dtype)
        reads = sim_read + (written if facts.inplace else [])
        return costs.Op("elementwise", reads=reads, writes=written, flops=_elements(sim_read, written), dtype=dtype)
    if len(sim_read) == 1 and len(written) == 1 and costs.same_data(sim_read[0], written[0]):
        return None                          # PyTorch skips a copy onto itself: no kernel
    if _repeats(sim_read, written):
        # a source expanded with stride 0 (one byte to n): the caches serve its repeats, so the
        # kernel writes memory as a fill does, whatever the program counts
        return costs.Op("fill", reads=sim_read, writes=written, dtype=dtype)
    return costs.Op("copy", reads=sim_read, writes=written, dtype=dtype)


def _elements(read: list, written: list) -> float:
    """The FLOPs of a reduction or an elementwise op: one per element of its largest tensor."""
    return float(max(t.numel() for t in read + written))


def _repeats(read: list, written: list) -> bool:
    """Whether an op writes more elements than the distinct ones it reads (a broadcast source)."""
    return sum(costs.nbytes(t) // t.element_size() for t in read) < sum(t.numel() for t in written)


def _one_to_one(read: list, written: list) -> bool:
    """Whether an op reads one simulated tensor and writes another of the same bytes."""
    return (len(read) == 1 and len(written) == 1 and costs.nbytes(read[0]) == costs.nbytes(written[0])
            and not costs.same_data(read[0], written[0]))


def _host_bytes(passed: list) -> int:
    """Bytes of host tensors (more than one element) an op on the device reads (``passed``: the
    call's ``_arguments``): a host-to-device copy crosses the host link."""
    return sum(costs.nbytes(t) for written, value in passed if not written
               for t in _tensors(value, []) if not _is_sim(t) and t.numel() > 1)


def _product_shape(name: str, args, kwargs):
    """The result's shape of a matrix product, or None to let torch's meta kernel decide."""
    if kwargs or name not in _PRODUCTS:
        return None
    a, b = (args[1], args[2]) if name in ("addmm", "baddbmm") and len(args) >= 3 else args[:2]
    rank = 3 if name in ("bmm", "baddbmm") else 2
    if not (_is_sim(a) and _is_sim(b)) or a.dtype != b.dtype or a.dim() != rank or b.dim() != rank:
        return None
    if a.shape[:-2] != b.shape[:-2] or a.shape[-1] != b.shape[-2]:
        return None
    shape = (*a.shape[:-1], b.shape[-1])
    if name in ("addmm", "baddbmm") and (not _is_sim(args[0]) or args[0].shape != shape
                                         or any(isinstance(x, torch.Tensor) for x in args[3:])):
        return None
    return shape


def _cat_shape(args, kwargs):
    """``cat``'s result shape for same-dtype, same-rank simulated tensors, or None."""
    tensors = args[0] if args else None
    dim = args[1] if len(args) > 1 else kwargs.get("dim", 0)
    if (set(kwargs) - {"dim"} or not isinstance(tensors, (list, tuple)) or not tensors
            or not all(_is_sim(t) for t in tensors) or not isinstance(dim, int)):
        return None
    first = tensors[0]
    if first.dim() == 0 or not -first.dim() <= dim < first.dim():
        return None
    dim %= first.dim()
    if any(t.dtype != first.dtype or t.dim() != first.dim()
           or t.shape[:dim] + t.shape[dim + 1:] != first.shape[:dim] + first.shape[dim + 1:] for t in tensors):
        return None
    return (*first.shape[:dim], sum(t.shape[dim] for t in tensors), *first.shape[dim + 1:])


#: Products whose meta kernel is Python (torch._meta_registrations, whose first torch._check
#: imports sympy, about a second): their result is shaped here. Shapes only; costs come from the
#: FLOP registry as for every op.
_PRODUCTS = frozenset({"mm", "bmm", "addmm", "baddbmm"})


def _run(func, facts: _Facts, args, kwargs, passed: list):
    """The op's result; ops that change only values skip their meta kernel (see the module doc)."""
    name = facts.name
    if facts.default:
        shape = _cat_shape(args, kwargs) if name == "cat" else _product_shape(name, args, kwargs)
        if shape is not None:
            like = args[0][0] if name == "cat" else args[-1] if name in ("mm", "bmm") else args[1]
            return torch.ops.aten.empty.memory_format(shape, dtype=like.dtype, device=META)
    if facts.inplace and not facts.inplace_view:
        targets = [v for written, v in passed if written and _is_sim(v)]
        if len(targets) == 1 and facts.returns == 1:
            return targets[0]
    if (facts.seeded and not any(isinstance(a, torch.Tensor) for a in args)
            and kwargs.get("device") == META and args and isinstance(args[0], (list, tuple))):
        return torch.ops.aten.empty.memory_format(args[0], dtype=kwargs.get("dtype"), device=META)
    return func(*args, **kwargs)


class SimDispatch(TorchDispatchMode):
    """Costs every aten op that touches the simulated device on the process's device (state)."""

    @classmethod
    def _should_skip_dynamo(cls) -> bool:
        return False          # torch would import torch._dynamo (seconds) at this mode's first op

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        # Ops reach this mode with SimMode popped, except from code that never passes through
        # __torch_function__ (TorchScript, a storage's copy): there the tensors would still
        # report 'cuda', so the op is read with torch-function handling off.
        with torch._C.DisableTorchFunction():
            return self._dispatch(func, args, kwargs or {})

    def _dispatch(self, func, args, kwargs):
        sim_input = _any_sim(args) or _any_sim(kwargs.values())
        if not sim_input and kwargs.get("device") != META:
            return func(*args, **kwargs)        # host work (a CPU check's tensors): as it is
        if not getattr(_thread_uses, "device", False):
            _thread_uses.device = True          # this thread's first device op: the runtime makes
            state.part("driver").make_current()     # the primary context current here (driver.py)
        facts = _facts(func)
        lower = autocast.dtype(facts.name)
        if lower is not None:               # inside torch.autocast('cuda'): cast as the GPU does
            args, kwargs = autocast.cast(self, args, kwargs, lower, _is_sim)
        if facts.composite:
            # an op made of others (matmul, einsum) reaches a mode whole where autograd is off
            # (inference_mode): its parts are the kernels, costed one by one
            with self:
                out = func.decompose(*args, **kwargs)
            if out is not NotImplemented:
                return out
        passed = _arguments(facts, args, kwargs)
        out = _run(func, facts, args, kwargs, passed)
        device = state.current()
        if device is None:
            return out
        outputs = [t for t in _tensors(out, []) if _is_sim(t)]
        for t in outputs:
            device.track(t, new=True)
        if not outputs and not sim_input:
            return out
        host = _host_bytes(passed)
        if host:
            device.transfer("h2d", host)
            return out
        op = kernel(func, args, kwargs, out, passed)
        if op is not None:
            device.launch(op)
        return out

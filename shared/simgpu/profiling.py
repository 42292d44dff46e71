"""torch.profiler on the simulated device: the device's kernels in its results, as on a GPU.

On a GPU, torch.profiler's CUDA activity (CUPTI) adds one event per kernel and memcpy the device
ran while profiling, with its start and end on the device: code that sums their ``device_time``
times the device alone, launch gaps excluded. A build without CUDA records CPU ops only.
``install`` wraps torch.autograd.profiler.profile (what torch.profiler.profile drives): while a
simulated device is active and the profile asked for the CUDA activity, its results list what
the device ran (its activity log, device.py ``activity``) the same way, ``device_type`` CUDA,
times in microseconds, names as CUPTI gives them; asked for the CUDA activity alone, no CPU op.
"""
from __future__ import annotations

import weakref

import torch
from torch.autograd import ProfilerState
from torch.autograd.profiler_util import FunctionEvent

from shared.simgpu import state

#: CUPTI's names for each kind of work (cudaMemcpy's, PyTorch's kernels'); a matmul's is cuBLAS's
#: kernel for the device's architecture.
NAMES = {
    "copy": "Memcpy DtoD (Device -> Device)",
    "h2d": "Memcpy HtoD (Pageable -> Device)",
    "d2h": "Memcpy DtoH (Device -> Pageable)",
    "matmul": "sm{arch}_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_cublas",
    "fill": "void at::native::vectorized_elementwise_kernel<4, at::native::FillFunctor<float>, "
            "std::array<char*, 1ul> >(int, at::native::FillFunctor<float>, std::array<char*, 1ul>)",
    "random": "void at::native::(anonymous namespace)::distribution_elementwise_grid_stride_kernel<float, 4>",
    "elementwise": "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
                   "std::array<char*, 3ul> >",
    "reduction": "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, "
                 "at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float> > > >",
}
#: CUPTI's id of the default stream, which device events report as their thread.
DEFAULT_STREAM_ID = 7
#: Past any index the device's activity log reaches: asking from here answers where it stands.
END = 2**62

_started: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()   # profile -> (device, first index)
_ran: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()       # profile -> (arch, [[kind, start, end], ...])
_cuda_only: weakref.WeakSet = weakref.WeakSet()                     # profiles that asked for no CPU activity
_ORIGINALS: dict[str, object] = {}


def _init(self, *args, **kwargs):
    # A CUDA build's kineto records the CUDA activity alone (CUPTI); a CPU build asserts that only
    # legacy profiling could, and legacy needs the CPU too. Profile the CPU underneath, show none of it.
    cuda_only = state.current() is not None and kwargs.get("use_cpu") is False and (
        kwargs.get("use_device") == "cuda" or kwargs.get("use_cuda"))
    if cuda_only:
        kwargs["use_cpu"] = True
    _ORIGINALS["__init__"](self, *args, **kwargs)
    if cuda_only:
        _cuda_only.add(self)


def _prepare_trace(self):
    # torch falls back to timing CUDA with events where CUPTI is not built; the device's own
    # activity stands in for CUPTI here, so the profile is an ordinary kineto one
    if state.current() is not None and self.profiler_kind == ProfilerState.KINETO_GPU_FALLBACK:
        self.profiler_kind = ProfilerState.KINETO
    _ORIGINALS["_prepare_trace"](self)


def _start_trace(self):
    _ORIGINALS["_start_trace"](self)
    dev = state.current()
    if dev is not None and self.use_device == "cuda":
        _started[self] = (dev, dev.ask({"op": "activity", "from": END})["next"])


def _exit(self, *exc):
    out = _ORIGINALS["__exit__"](self, *exc)          # synchronizes the device first, as on a GPU
    dev, first = _started.pop(self, (None, 0))
    if dev is not None:
        ran = _ran.setdefault(self, (f"{dev.cfg['major']}{dev.cfg['minor']}", []))[1]
        while True:
            page = dev.ask({"op": "activity", "from": first})
            if not page["kernels"]:
                break
            ran += page["kernels"]
            first = page["next"]
    return out


def _parse(self, *args, **kwargs):
    events = list(_ORIGINALS["_parse_kineto_results"](self, *args, **kwargs))
    if self in _cuda_only:
        events = [e for e in events if e.device_type != torch.autograd.DeviceType.CPU]
    arch, ran = _ran.pop(self, ("", []))
    if not ran:
        return events
    base, first_id = ran[0][1], max((e.id for e in events), default=0) + 1
    for i, (kind, start, end) in enumerate(ran):
        name = NAMES.get(kind, NAMES["elementwise"]).format(arch=arch)
        events.append(FunctionEvent(id=first_id + i, name=name, thread=DEFAULT_STREAM_ID,
                                    start_us=(start - base) * 1e6, end_us=(end - base) * 1e6,
                                    use_device="cuda", device_type=torch.autograd.DeviceType.CUDA,
                                    device_index=0, trace_name=name, input_shapes=[], stack=[],
                                    concrete_inputs=[], kwinputs={}))
    return events


def install() -> None:
    """Wrap the profiler's set-up, start, stop and parse (idempotent)."""
    profile = torch.autograd.profiler.profile
    wrappers = (("__init__", _init), ("_prepare_trace", _prepare_trace), ("_start_trace", _start_trace),
                ("__exit__", _exit), ("_parse_kineto_results", _parse))
    for attr, wrapper in wrappers:
        if attr not in _ORIGINALS:
            _ORIGINALS[attr] = getattr(profile, attr)
            wrapper.__name__ = wrapper.__qualname__ = attr
            wrapper.__module__ = profile.__module__
            setattr(profile, attr, wrapper)


def uninstall() -> None:
    profile = torch.autograd.profiler.profile
    for attr, original in _ORIGINALS.items():
        setattr(profile, attr, original)
    _ORIGINALS.clear()

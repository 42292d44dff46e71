"""Device profiles of the simulated GPU: a plain, JSON-able config dict built from the tables.

``config()`` resolves a hardware profile (shared/data/hardware.yml) plus the simulator's constants
(shared/data/simgpu.yml) into one flat dict of numbers, optionally scaled by factors drawn from a
seed so that a hard-coded answer fails. ``validate()`` checks a dict that came over a pipe.

Fields (units in the names):
    profile             hardware.yml key the profile was built from, e.g. 'h100-sxm'
    seed                int that randomized bw/peak/L2, or None for the table's numbers
    name                device name reported by torch.cuda.get_device_name
    bw_gbs              spec main-memory bandwidth, GB/s (1e9 bytes/s)
    copy_efficiency     achieved fraction of bw_gbs for a copy counted as read + write
    l2_bytes            L2 (last-level) cache size, bytes
    l2_speedup          bandwidth of an L2-resident working set over achieved main-memory bandwidth
    peak_tflops         dense 16-bit matmul peak, TFLOP/s (1e12 FLOP/s)
    matmul_efficiency   achieved fraction of the peak for a large matmul
    dtype_peak          dtype name -> fraction of peak_tflops for that dtype ({'float32': 0.0677, ...})
    memory_bytes        device memory capacity, bytes (allocations past it raise OutOfMemoryError)
    cuda_name           the part's name as the driver reports it (get_device_properties().name)
    sm_count, major, minor   multiprocessors and compute capability, as device properties report
    h2d_gbs             host <-> device copy bandwidth, GB/s (the device's host link, achieved)
    launch_overhead_s   host seconds per kernel launch (the device runs asynchronously)
    first_use_s         one-time host seconds the first time each kind of operation runs
    clock_read_s        seconds every clock read advances the host clock
    poll_s              host seconds per query of an event or a stream (a polling loop ends)
    min_kernel_s        device seconds no kernel or transfer runs faster than (launch-bound work)
    kernel_jitter       each kernel's device time is scaled by a factor drawn within 1 +/- this
                        (seeded: repeated timings differ, as on a GPU; the same seed, the same draws)
    sync_overhead_s     host seconds per synchronize or host read
    alloc_s             host seconds per allocation
    sync_launches       True: every launch waits for its kernel (like CUDA_LAUNCH_BLOCKING=1)
    first_use           False: no one-time cost (isolates other mistakes from a missing warm-up)
"""
from __future__ import annotations

import functools
import math
import random
from pathlib import Path

from shared import tables, yamlfile

DATA = Path(__file__).resolve().parent.parent / "data" / "simgpu.yml"

#: Every field of a config and its type; validate() refuses anything else.
FIELDS: dict[str, type | tuple] = {
    "profile": str, "seed": (int, type(None)), "name": str, "cuda_name": str,
    "bw_gbs": float, "copy_efficiency": float, "l2_bytes": int, "l2_speedup": float,
    "peak_tflops": float, "matmul_efficiency": float, "dtype_peak": dict,
    "memory_bytes": int, "sm_count": int, "major": int, "minor": int, "h2d_gbs": float,
    "memory_clock_khz": int, "bus_width_bits": int,
    "launch_overhead_s": float, "first_use_s": float, "clock_read_s": float, "poll_s": float,
    "min_kernel_s": float, "kernel_jitter": float,
    "sync_overhead_s": float, "alloc_s": float,
    "sync_launches": bool, "first_use": bool,
}
#: Fields that must be > 0 (the others that are numbers may be 0).
POSITIVE = {"bw_gbs", "copy_efficiency", "l2_bytes", "l2_speedup", "peak_tflops",
            "matmul_efficiency", "memory_bytes", "sm_count", "h2d_gbs", "clock_read_s", "poll_s"}


@functools.cache
def constants() -> dict:
    """shared/data/simgpu.yml as a dict."""
    with open(DATA, encoding="utf-8") as fh:
        return yamlfile.safe_load(fh)


def gpu_keys() -> list[str]:
    """Profiles the simulator can run: the hardware table's devices that are GPUs."""
    return [key for key in tables.devices() if key in constants()["devices"]]


def config(profile: str = "h100-sxm", seed: int | None = None, *, sync_launches: bool = False,
           first_use: bool = True, **overrides) -> dict:
    """A simulated-GPU config: plain JSON-able data, every field documented in this module.

    Args:
        profile: a hardware.yml key or alias ('h100', 'spark', 'a100', ...).
        seed: None for the table's numbers; an int scales bandwidth, peak, L2 size and L2 speed
            by factors drawn from it (same seed, same profile, bit for bit).
        sync_launches: every launch waits for its kernel to finish.
        first_use: the first operation of each kind pays ``first_use_s`` of host time.
        overrides: any other field by name, e.g. ``launch_overhead_s=0.0``.

    Raises:
        ValueError: unknown profile, a profile that is not a GPU, or an unknown/bad field.
    """
    try:
        dev = tables.device(profile)
    except KeyError as exc:
        raise ValueError(str(exc).strip("'\"")) from None
    extra = constants()["devices"].get(dev.key)
    if extra is None:
        raise ValueError(f"profile {profile!r} is not a GPU the simulator models; "
                         f"GPUs: {', '.join(gpu_keys())}")
    c = constants()
    timing, eff = c["timing"], c["efficiency"]
    peak = dev.peak_bf16_tflops if dev.peak_bf16_tflops is not None else dev.peak_fp16_tflops
    cfg = {
        "profile": dev.key, "seed": seed, "name": dev.name, "cuda_name": extra["cuda_name"],
        "bw_gbs": float(dev.bw_gbs), "copy_efficiency": float(eff["copy"][extra["memory_kind"]]),
        "l2_bytes": int(dev.l2_bytes), "l2_speedup": float(eff["l2_speedup"]),
        "peak_tflops": float(peak), "matmul_efficiency": float(eff["matmul"]),
        "dtype_peak": {k: float(v) for k, v in eff["dtype_peak"].items()},
        "memory_bytes": int(dev.memory_bytes), "sm_count": int(extra["sm_count"]),
        "major": int(extra["major"]), "minor": int(extra["minor"]),
        **_memory_interface(extra["memory_kind"], float(dev.bw_gbs)),
        "h2d_gbs": float(extra["host_link_gbs"]) * float(eff["host_link"]),
        "launch_overhead_s": float(timing["launch_overhead_s"]), "first_use_s": float(timing["first_use_s"]),
        "clock_read_s": float(timing["clock_read_s"]), "poll_s": float(timing["poll_s"]),
        "min_kernel_s": float(timing["min_kernel_s"]), "kernel_jitter": float(timing["kernel_jitter"]),
        "sync_overhead_s": float(timing["sync_overhead_s"]),
        "alloc_s": float(timing["alloc_s"]),
        "sync_launches": bool(sync_launches), "first_use": bool(first_use),
    }
    if seed is not None:
        _randomize(cfg, seed)
    for key, value in overrides.items():
        if key not in FIELDS or key in ("profile", "seed"):
            raise ValueError(f"unknown simulated-GPU field {key!r}; known: {', '.join(FIELDS)}")
        cfg[key] = float(value) if FIELDS[key] is float and not isinstance(value, bool) else value
    return validate(cfg)


def _memory_interface(kind: str, spec_bw_gbs: float) -> dict:
    """The memory clock (kHz) and bus width (bits) torch.cuda.get_device_properties reports, from
    the spec sheet's bandwidth (bandwidth = 2 x clock x bus width / 8, double data rate): HBM
    stacks are 5,120 bits wide, GDDR and LPDDR boards 384, 256 or 128 by their bandwidth. They
    are the spec's, not the seeded device's: a number computed from them does not follow it."""
    bits = 5120 if kind == "hbm" else 384 if spec_bw_gbs > 700 else 256 if spec_bw_gbs > 250 else 128
    return {"memory_clock_khz": round(spec_bw_gbs * 1e9 / (2 * bits / 8) / 1e3), "bus_width_bits": bits}


#: What a CUDA program can learn of the device without measuring (its properties): all the
#: student's process ever receives (its clocks start at the real ones, clockbase.py).
PUBLIC = ("name", "memory_bytes", "l2_bytes", "sm_count", "major", "minor", "memory_clock_khz",
          "bus_width_bits")


def public(cfg: dict) -> dict:
    """The fields of ``cfg`` a CUDA program sees (torch.cuda.get_device_properties and kin),
    plus 'integrated'; never the bandwidth, peak, L2 speed, efficiencies, seed or settings."""
    out = {key: cfg[key] for key in PUBLIC}
    out["name"] = cfg["cuda_name"]              # what the driver reports, as on the real part
    out["integrated"] = cfg["profile"] == "dgx-spark"
    return out


def validate_public(info) -> dict:
    """``info`` checked as a dict from ``public()``; ValueError names the first bad field."""
    if not isinstance(info, dict) or set(info) != set(PUBLIC) | {"integrated"}:
        raise ValueError("a simulated device's public description must have exactly the fields "
                         f"{', '.join(PUBLIC)}, integrated")
    for key in PUBLIC:
        kind = FIELDS[key]
        if isinstance(info[key], bool) or not isinstance(info[key], kind):
            raise ValueError(f"simulated-GPU field {key!r} has the wrong type: {info[key]!r:.40}")
    return dict(info)


def _randomize(cfg: dict, seed: int) -> None:
    """Scale bandwidth, peak, L2 size, L2 speed and the launch costs (overhead, floor) by seeded factors (rounded,
    so JSON-stable): no constant of the model is a round number a program could recognise."""
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ValueError(f"seed must be an int or None, got {seed!r}")
    ranges = constants()["randomize"]
    rng = random.Random(seed)
    factor = {key: rng.uniform(*ranges[key]) for key in ("bw", "peak", "l2", "l2_speedup")}
    cfg["bw_gbs"] = round(cfg["bw_gbs"] * factor["bw"], 1)
    cfg["peak_tflops"] = round(cfg["peak_tflops"] * factor["peak"], 1)
    cfg["l2_bytes"] = max(2**20, round(cfg["l2_bytes"] * factor["l2"] / 2**20) * 2**20)
    cfg["l2_speedup"] = round(factor["l2_speedup"], 2)
    cfg["launch_overhead_s"] = round(cfg["launch_overhead_s"] * rng.uniform(*ranges["launch"]), 12)
    cfg["min_kernel_s"] = round(cfg["min_kernel_s"] * rng.uniform(*ranges["floor"]), 12)


def validate(cfg) -> dict:
    """``cfg`` checked field by field; a copy. ValueError names the first bad or missing field."""
    if not isinstance(cfg, dict):
        raise ValueError(f"a simulated-GPU config must be a dict, got {type(cfg).__name__}")
    unknown = sorted(set(cfg) - set(FIELDS))
    if unknown:
        raise ValueError(f"unknown simulated-GPU field {unknown[0]!r}")
    out = {}
    for key, kind in FIELDS.items():
        if key not in cfg:
            raise ValueError(f"simulated-GPU config lacks field {key!r}; build it with shared.simgpu.config()")
        value = cfg[key]
        if kind is float and isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        if kind is int and isinstance(value, bool) or not isinstance(value, kind):
            raise ValueError(f"simulated-GPU field {key!r} has the wrong type: {value!r}")
        if isinstance(value, float) and (not math.isfinite(value) or value < 0):
            raise ValueError(f"simulated-GPU field {key!r} must be a finite number >= 0, got {value!r}")
        if key in POSITIVE and value <= 0:
            raise ValueError(f"simulated-GPU field {key!r} must be > 0, got {value!r}")
        out[key] = dict(value) if isinstance(value, dict) else value
    return out

"""What ``python -m shared.simgpu`` prints for why17 before the verdicts: the bandwidth sweep with
the cache cliff marked, measured_bandwidth, and the matmul figure; and the device model's answer
for a correct function (the student's machine has no reference solution)."""
from __future__ import annotations

from shared import simgpu
from shared.simgpu import expected

#: A drop in GB/s by at least this factor from one sweep size to the next marks the cache cliff.
CLIFF_DROP = 1.5
SWEEP_MIB = (8, 32, 128, 512, 2048, 8192)
MATMUL_N = 8192


def _call(label, fn):
    try:
        return fn()
    except Exception as exc:  # the student's error, shown in one line
        print(f"  {label} raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
        return None


def show(modules: dict, cfg: dict) -> None:
    """Print the sweep and measured_bandwidth (bw) and the matmul figure (flops) on ``cfg``."""
    if "bw" in modules:
        _show_sweep(modules["bw"], cfg)
    if "flops" in modules:
        _show_matmul(modules["flops"], cfg)


def _show_sweep(bw, cfg) -> None:
    l2 = cfg["l2_bytes"]
    print(f"\nbandwidth_sweep({SWEEP_MIB}) on the {cfg['name']}:")
    with simgpu.active(cfg):
        sweep = _call("bandwidth_sweep", lambda: bw.bandwidth_sweep(SWEEP_MIB))
    if isinstance(sweep, dict):
        print(f"  {'MiB':>6}  {'GB/s':>9}  {'x spec':>6}")
        previous = None
        for size in sorted(sweep):
            gbs = sweep[size]
            try:
                gbs = float(gbs)
            except (TypeError, ValueError):
                print(f"  {size:>6}  {gbs!r}")
                continue
            note = "copy fits in L2" if 2 * size * 2**20 <= l2 else ""
            if previous and gbs > 0 and previous / gbs >= CLIFF_DROP:
                note = (f"<- cache cliff: a copy of {size} MiB touches {2 * size} MiB, "
                        f"past the {l2 // 2**20} MiB L2")
            print(f"  {size:>6}  {gbs:>9.0f}  {gbs / cfg['bw_gbs']:>6.2f}  {note}")
            previous = gbs
    with simgpu.active(cfg):
        m = _call("measured_bandwidth", bw.measured_bandwidth)
    if isinstance(m, (int, float)):
        print(f"measured_bandwidth(): {m:.0f} GB/s ({m / cfg['bw_gbs']:.2f}x the {cfg['bw_gbs']:.0f} GB/s spec)")


def _show_matmul(flops, cfg) -> None:
    with simgpu.active(cfg):
        t = _call("matmul_tflops", lambda: flops.matmul_tflops(MATMUL_N))
    if isinstance(t, (int, float)):
        print(f"matmul_tflops({MATMUL_N}): {t:.0f} TFLOP/s ({t / cfg['peak_tflops']:.2f}x the "
              f"{cfg['peak_tflops']:.0f} TFLOP/s bf16 peak)")


def model_reference(module: str, function: str, args: tuple, kwargs: dict, sim: dict) -> float:
    """What a correct ``module.function(*args, **kwargs)`` reads on the device ``sim``, from the model."""
    if (module, function) == ("bw", "copy_bandwidth"):
        return expected.copy_gbs(sim, args[0])
    if (module, function) == ("flops", "matmul_tflops"):
        return expected.matmul_tflops(sim, args[0], kwargs.get("dtype", "bfloat16"))
    raise LookupError(f"no model answer for {module}.{function}")

"""The roofline of one kernel on the simulated GPU: the time it takes, from the bytes it moves
and the FLOPs it computes, at the bandwidth and peak of a config (profile.py)."""
from __future__ import annotations


def roofs(cfg: dict, kind: str, dtype: str, l2: bool) -> tuple[float, float]:
    """(bytes per second, FLOPs per second) one kernel runs at (``kernel_seconds``' arguments)."""
    bandwidth = cfg["bw_gbs"] * 1e9 * cfg["copy_efficiency"] * (cfg["l2_speedup"] if l2 else 1.0)
    peak = cfg["peak_tflops"] * 1e12 * cfg["dtype_peak"].get(dtype, cfg["dtype_peak"].get("float32", 1.0))
    if kind == "matmul":
        peak *= cfg["matmul_efficiency"]
    return bandwidth, peak


def kernel_seconds(cfg: dict, kind: str, moved_bytes: int, flops: float, dtype: str, l2: bool,
                   roof: tuple[float, float] | None = None) -> float:
    """Roofline time of one kernel in seconds: max(bytes / bandwidth, FLOPs / peak), and never
    less than the config's ``min_kernel_s`` (a kernel that does almost nothing is launch-bound).

    Args:
        cfg: a simulated-GPU config (profile.py).
        kind: 'matmul' runs at the matmul efficiency of the peak; others at the plain peak.
        moved_bytes: bytes read plus bytes written.
        flops: floating-point operations.
        dtype: dtype name, which picks the fraction of the 16-bit peak.
        l2: whether the working set is L2-resident (runs at l2_speedup x main memory).
        roof: ``roofs(cfg, kind, dtype, l2)`` when the caller keeps it.
    """
    bandwidth, peak = roof or roofs(cfg, kind, dtype, l2)
    return max(moved_bytes / bandwidth, flops / peak, cfg["min_kernel_s"])

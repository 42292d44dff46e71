"""Task 4: the roofline and the batch curve as pictures.

Units: x in FLOPs per byte, y in TFLOP/s (1e12 FLOP/s); bandwidth in GB/s (1e9 bytes/s).
Lesson: The roofline (two lines, one ridge point) and Figure 003 (throughput against batch).
"""
import matplotlib
import predict
from matplotlib.figure import Figure

matplotlib.use("Agg")


def plot_roofline(peak_tflops, bw_gbs, workloads=None) -> Figure:
    """Log-log roofline: the bandwidth slope and the compute roof meeting at the ridge point.

    Args:
        peak_tflops: peak compute in TFLOP/s (1e12 FLOP/s).
        bw_gbs: memory bandwidth in GB/s (1e9 bytes/s).
        workloads: optional dict from a workload's name to its arithmetic intensity in FLOPs
            per byte; each becomes a labelled point at its attainable TFLOP/s.

    Returns:
        A matplotlib Figure with one log-log Axes: x in FLOPs/byte, y in TFLOP/s, the ridge point
        marked.
    """
    raise NotImplementedError('task4.1: plot_roofline')


def plot_batch_curve(params_read, bytes_per_weight, bw_gbs, peak_tflops, *, context,
                     kv_bytes_per_token, batches=(1, 2, 4, 8, 16, 32, 64, 128)) -> Figure:
    """Total and per-stream tokens/s against batch (the lesson's Figure 003).

    Args:
        params_read: parameters read per step.
        bytes_per_weight: bytes per weight.
        bw_gbs: memory bandwidth in GB/s (1e9 bytes/s).
        peak_tflops: peak compute in TFLOP/s (1e12 FLOP/s).
        context: tokens in each stream's KV cache.
        kv_bytes_per_token: KV cache bytes per token of context.
        batches: batch sizes to plot (positive integers).

    Returns:
        A matplotlib Figure with one Axes, x = batch (log scale), y = tokens/s, with a line
        labelled "total" and a line labelled "per stream".
    """
    raise NotImplementedError('task4.2: plot_batch_curve')

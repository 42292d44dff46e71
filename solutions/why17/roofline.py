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
    ### BEGIN SOLUTION
    workloads = dict(workloads or {})
    ridge = predict.ridge_point(peak_tflops, bw_gbs)
    xs = [ridge] + [predict.arithmetic_intensity(i, 1.0) for i in workloads.values()]
    lo, hi = min(xs) / 10.0, max(xs) * 10.0
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot([lo, ridge], [bw_gbs * lo / 1000.0, peak_tflops], color="tab:blue",
            label=f"memory roof: {bw_gbs:g} GB/s x intensity")
    ax.plot([ridge, hi], [peak_tflops, peak_tflops], color="tab:red",
            label=f"compute roof: {peak_tflops:g} TFLOP/s")
    ax.plot([ridge], [peak_tflops], "o", color="black", label=f"ridge point: {ridge:.0f} FLOPs/byte")
    ax.annotate(f"ridge {ridge:.0f}", (ridge, peak_tflops), textcoords="offset points", xytext=(5, -15))
    for name, intensity in workloads.items():
        y = predict.attainable_tflops(intensity, peak_tflops, bw_gbs)
        ax.plot([intensity], [y], "s", label=name)
        ax.annotate(name, (intensity, y), textcoords="offset points", xytext=(5, 5))
    ax.set_xlabel("arithmetic intensity (FLOPs/byte)")
    ax.set_ylabel("attainable TFLOP/s")
    ax.set_title("Roofline")
    ax.legend(loc="lower right", fontsize="small")
    return fig
    ### END SOLUTION


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
    ### BEGIN SOLUTION
    batches = list(batches)
    per_stream, total = [], []
    for b in batches:
        one, all_ = predict.decode_ceiling(params_read, bytes_per_weight, bw_gbs, batch=b,
                                           context=context, kv_bytes_per_token=kv_bytes_per_token,
                                           peak_tflops=peak_tflops)
        per_stream.append(one)
        total.append(all_)
    fig = Figure(figsize=(7, 4.5))
    ax = fig.add_subplot()
    ax.set_xscale("log", base=2)
    ax.plot(batches, total, "o-", label="total")
    ax.plot(batches, per_stream, "s-", label="per stream")
    ax.set_xlabel("batch (streams)")
    ax.set_ylabel("tokens/s")
    ax.set_title(f"Decode ceiling at {context:g} tokens of context")
    ax.legend()
    return fig
    ### END SOLUTION

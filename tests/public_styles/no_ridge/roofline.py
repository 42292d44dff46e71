"""Wrong: both roofs drawn right, but the ridge point is never marked or labelled."""
import matplotlib

matplotlib.use("Agg")
import numpy as np  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402


def plot_roofline(peak_tflops, bw_gbs, workloads=None):
    ridge = peak_tflops * 1e3 / bw_gbs
    fig = Figure()
    ax = fig.add_subplot()
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.plot([ridge / 1000, ridge, ridge * 100], [bw_gbs * ridge / 1e6, peak_tflops, peak_tflops])
    for name, intensity in (workloads or {}).items():
        y = min(peak_tflops, bw_gbs * intensity / 1e3)
        ax.plot([intensity], [y], "o", label=name)
    ax.set_xlabel("intensity (FLOPs/byte)")
    ax.set_ylabel("TFLOP/s")
    return fig


def plot_batch_curve(params_read, bytes_per_weight, bw_gbs, peak_tflops, *, context,
                     kv_bytes_per_token, batches=(1, 2, 4, 8, 16, 32, 64, 128)):
    b = np.array(batches, dtype=float)
    step = np.maximum((params_read * bytes_per_weight + b * context * kv_bytes_per_token) / (bw_gbs * 1e9),
                      2 * params_read * b / (peak_tflops * 1e12))
    fig = Figure()
    ax = fig.add_subplot()
    ax.plot(b, b / step, label="total")
    ax.plot(b, 1 / step, label="per stream")
    ax.set_xlabel("batch")
    ax.set_ylabel("tokens/s")
    return fig

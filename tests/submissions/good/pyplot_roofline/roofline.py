# A CORRECT roofline.py in another style: pyplot, a sampled min() curve instead of two segments,
# an axvline for the ridge, scatter + annotate for workloads, semilogx for the batch curve, and
# its own arithmetic instead of calling predict.py. It must keep full marks.
import math

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def plot_roofline(peak_tflops, bw_gbs, workloads=None):
    ridge = peak_tflops * 1000.0 / bw_gbs
    xs = np.logspace(math.log10(ridge) - 3, math.log10(ridge) + 2, 200)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.loglog(xs, np.minimum(peak_tflops, bw_gbs * xs / 1000.0), "-", color="k", label="roofline")
    ax.axvline(ridge, linestyle=":", color="grey", label="ridge point")
    for name, intensity in (workloads or {}).items():
        y = min(peak_tflops, bw_gbs * intensity / 1000.0)
        ax.scatter([intensity], [y], zorder=3)
        ax.annotate(name, xy=(intensity, y), xytext=(4, 4), textcoords="offset points")
    ax.set_xlabel("Arithmetic intensity [FLOPs/byte]")
    ax.set_ylabel("Performance [TFLOP/s]")
    ax.legend()
    plt.close(fig)
    return fig


def plot_batch_curve(params_read, bytes_per_weight, bw_gbs, peak_tflops, *, context,
                     kv_bytes_per_token, batches=(1, 2, 4, 8, 16, 32, 64, 128)):
    bs = np.array(batches, dtype=float)
    memory_s = (params_read * bytes_per_weight + bs * context * kv_bytes_per_token) / (bw_gbs * 1e9)
    compute_s = 2.0 * params_read * bs / (peak_tflops * 1e12)
    step_s = np.maximum(memory_s, compute_s)
    fig = plt.figure()
    ax = fig.add_subplot(1, 1, 1)
    ax.semilogx(bs, bs / step_s, label="Total")
    ax.semilogx(bs, 1.0 / step_s, "--", label="Per-stream")
    ax.set_xlabel("Batch size")
    ax.set_ylabel("Decode speed (tokens/s)")
    ax.legend()
    plt.close(fig)
    return fig

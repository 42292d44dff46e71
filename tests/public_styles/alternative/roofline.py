"""Correct plots in another style: pyplot, one numpy curve for both roofs, scatter, axvline."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402


def plot_roofline(peak_tflops, bw_gbs, workloads=None):
    ridge = peak_tflops * 1e3 / bw_gbs
    x = np.logspace(np.log10(ridge) - 3, np.log10(ridge) + 2, 200)
    fig, ax = plt.subplots()
    ax.loglog(x, np.minimum(peak_tflops, bw_gbs * x / 1e3), label="roofline")
    ax.axvline(ridge, linestyle="--", color="grey")
    for name, intensity in (workloads or {}).items():
        y = min(peak_tflops, bw_gbs * intensity / 1e3)
        ax.scatter([intensity], [y])
        ax.annotate(name, (intensity, y))
    ax.set_xlabel("FLOPs per byte")
    ax.set_ylabel("TFLOP/s")
    plt.close(fig)
    return fig


def plot_batch_curve(params_read, bytes_per_weight, bw_gbs, peak_tflops, *, context,
                     kv_bytes_per_token, batches=(1, 2, 4, 8, 16, 32, 64, 128)):
    b = np.array(batches, dtype=float)
    step = np.maximum((params_read * bytes_per_weight + b * context * kv_bytes_per_token) / (bw_gbs * 1e9),
                      2 * params_read * b / (peak_tflops * 1e12))
    fig, ax = plt.subplots()
    ax.semilogx(b, b / step, label="Total throughput")
    ax.semilogx(b, 1 / step, label="Per-stream")
    ax.set_xlabel("Batch size")
    ax.set_ylabel("Tokens/s")
    ax.legend()
    plt.close(fig)
    return fig

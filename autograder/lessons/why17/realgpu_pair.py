"""The real-GPU checks' measurements: the student's and the reference's functions on one device,
interleaved (reference, student, reference, student, ...).

Timings on a real GPU drift with clocks, temperature and other tenants; measuring both codes
alternately lets realgpu.py's judge compare them as ratios of medians. Everything returned is plain
data: numbers in the functions' own units (GB/s, TFLOP/s), bytes, and one-line error texts.

Runs wherever torch runs: on CUDA when available, else on the CPU (so the tests exercise it). The
grader (autograder/grading/real_gpu.py) runs ``measure`` in its own process over two sandboxed children,
the student's files in one and the reference's in the other (with this file, for
``device_info``), so the student's code never shares a process or a folder with the reference.
The calibration command runs ``python -m autograder.lessons.why17.realgpu_pair STUDENT_DIR
REFERENCE_DIR`` on trusted submissions, in one process, and reads one JSON line.
"""
from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

#: Interleaved (reference, student) pairs per quantity; the parent compares medians.
ROUNDS = 3
#: Timed copies / matmuls per call.
COPY_ITERS = 10
MATMUL_ITERS = 5
#: Matrix side of the FLOP comparison, elements (as the simulated check).
MATMUL_N = 4096
MIB = 2**20
#: The student modules measured.
MODULES = ("bw", "flops")


def _number(value) -> float | None:
    try:
        x = float(value)
    except (TypeError, ValueError, RuntimeError, OverflowError):
        return None
    return x if x == x and x not in (float("inf"), float("-inf")) else None


def _call(errors: dict, key: str, fn, *args, **kwargs) -> float | None:
    """``fn(*args, **kwargs)`` as a float; a raise is recorded once under ``key`` as one line."""
    try:
        return _number(fn(*args, **kwargs))
    except Exception as exc:  # the student's error is a result here
        errors.setdefault(key, f"{getattr(fn, '__name__', 'function')} raised {type(exc).__name__}: "
                               f"{' '.join(str(exc).split())[:200]}")
        return None


def sizes(l2_bytes: int) -> tuple[int, int]:
    """(small, large) copy sizes in bytes: an eighth of the L2 and eight times it, whole MiB."""
    return max(MIB, l2_bytes // 8 // MIB * MIB), -(-8 * l2_bytes // MIB) * MIB


def _largest_tensor(ops: list) -> int:
    """Bytes of the largest tensor a watched call wrote (the buffer it copied)."""
    return max((op["written_bytes"] for op in ops), default=0)


def device_info(l2_bytes: int | None = None) -> dict:
    """{"device": name, "l2_bytes": cache size} of the device ``shared.devices`` picks here; the
    CUDA context exists afterwards, so no later copy pays for creating it."""
    import torch

    from shared import devices

    dev = devices.resolve(None)
    torch.empty(1, device=dev)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    return {"device": name, "l2_bytes": int(l2_bytes or devices.last_level_cache_bytes(dev))}


def largest_watched(module, function: str) -> int:
    """Bytes of the largest tensor ``module.function()`` wrote, from aten ops watched in this
    process (a remote module answers ``watched`` itself)."""
    watched = getattr(module, "watched", None)
    if watched is not None:
        _value, ops = watched(function)
        return _largest_tensor(ops)
    from autograder.runtime.torchwatch import TorchWatch  # this file also runs in a sandboxed child

    with TorchWatch() as watch:
        getattr(module, function)()
    return _largest_tensor(watch.summary())


def measure(student: dict, reference: dict, device: dict, *, rounds: int = ROUNDS,
            matmul_n: int = MATMUL_N) -> dict:
    """Every figure the six real-GPU verdicts need, the student's and the reference's calls
    interleaved.

    Args:
        student, reference: {'bw': module, 'flops': module}, each a module of this process or a
            remote one in a process of its own (the grader keeps the reference out of the
            student's); a missing key skips its figures.
        device: ``device_info()``: the device's name and the cache size the copies are sized by.
        rounds: interleaved pairs per quantity.
        matmul_n: matrix side of the matmul comparison.

    Returns:
        {"device", "l2_bytes", "small", "large" (bytes), "cold" (the student's first GB/s in its
        process), "warm" [GB/s], "large_pairs"/"small_pairs"/"matmul_pairs" [[reference, student]],
        "measured_bytes" (largest tensor measured_bandwidth touched), "errors" {quantity: line}}.
        Values are None where a call raised or returned no number.
    """
    small, large = sizes(device["l2_bytes"])
    out = {"device": device["device"], "l2_bytes": device["l2_bytes"], "small": small, "large": large,
           "cold": None, "warm": [], "large_pairs": [], "small_pairs": [], "matmul_pairs": [],
           "measured_bytes": None, "errors": {}}
    err = out["errors"]
    s_bw, r_bw = student.get("bw"), reference.get("bw")
    if s_bw is not None and r_bw is not None:
        # First: the student's very first copy in its process (warm-up check), then it warm.
        out["cold"] = _call(err, "copy", s_bw.copy_bandwidth, large, iters=COPY_ITERS)
        for _ in range(rounds):
            out["warm"].append(_call(err, "copy", s_bw.copy_bandwidth, large, iters=COPY_ITERS))
        for key, n in (("large_pairs", large), ("small_pairs", small)):
            for _ in range(rounds):
                out[key].append([_call(err, "reference", r_bw.copy_bandwidth, n, iters=COPY_ITERS),
                                 _call(err, "copy", s_bw.copy_bandwidth, n, iters=COPY_ITERS)])
        try:
            out["measured_bytes"] = largest_watched(s_bw, "measured_bandwidth")
        except Exception as exc:
            err["measured"] = f"measured_bandwidth raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}"
    s_fl, r_fl = student.get("flops"), reference.get("flops")
    if s_fl is not None and r_fl is not None:
        for _ in range(rounds):
            out["matmul_pairs"].append([_call(err, "reference", r_fl.matmul_tflops, matmul_n, iters=MATMUL_ITERS),
                                        _call(err, "matmul", s_fl.matmul_tflops, matmul_n, iters=MATMUL_ITERS)])
    return out


def _load_file(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def main(argv: list[str]) -> int:
    """``STUDENT_DIR REFERENCE_DIR [L2_BYTES [MATMUL_N]]``: one JSON line of ``measure`` (trusted code only)."""
    student_dir, reference_dir = Path(argv[0]), Path(argv[1])
    device = device_info(int(argv[2]) if len(argv) > 2 else None)
    student = {m: _load_file(student_dir / f"{m}.py", f"student_{m}") for m in MODULES
               if (student_dir / f"{m}.py").is_file()}
    reference = {m: _load_file(reference_dir / f"{m}.py", f"reference_{m}") for m in MODULES}
    print(json.dumps(measure(student, reference, device, matmul_n=int(argv[3]) if len(argv) > 3 else MATMUL_N)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

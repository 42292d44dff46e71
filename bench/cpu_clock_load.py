"""How much the numbers the CPU checks judge move from call to call in the grading sandbox: the
reference's matmul_tflops and copy_bandwidth at flops_returns_tflops's and bw_returns_gbs's sizes,
called one at a time in one sandboxed child, as the checks call them.

    .venv/bin/python bench/cpu_clock_load.py [--calls N]

Prints min, median and max of each and the max/min ratio. Run it on a quiet machine and beside a
few busy loops (``for i in 1 2 3 4; do timeout 120 sh -c 'while :; do :; done' & done``): with the
child's clocks on CPU time (shared/simgpu/hostclock.py) a preemption never enters a reading, so
the ratio stays near what caches alone give. Figures only; nothing is asserted.
"""
from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from autograder.lessons.why17.checks import bw_cpu, flops_cpu  # noqa: E402
from autograder.lessons.why17.fixtures import build  # noqa: E402
from autograder.runtime.dtypes import Dtype  # noqa: E402
from autograder.sandbox.parent import Limits, Sandbox  # noqa: E402

#: (module, function, args, kwargs, unit) of each probe call.
PROBES = (
    ("flops", "matmul_tflops", (flops_cpu.PROBE_N,),
     {"iters": flops_cpu.PROBE_ITERS, "dtype": Dtype("float32"), "device": "cpu"}, "TFLOP/s"),
    ("bw", "copy_bandwidth", (bw_cpu.PROBE_BYTES,), {"iters": bw_cpu.PROBE_ITERS, "device": "cpu"}, "GB/s"),
)


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--calls", type=int, default=20, help="calls of each function (default 20)")
    args = p.parse_args()
    for module, function, fargs, kwargs, unit in PROBES:
        with Sandbox(build.REFERENCE, Limits(time_limit_s=120.0)) as box:
            box.has(module)
            values = [box.call(module, function, fargs, kwargs)[0] for _ in range(args.calls)]
        low, mid, high = min(values), statistics.median(values), max(values)
        print(f"{function}: {args.calls} calls, min {low:.4g}, median {mid:.4g}, max {high:.4g} {unit}; "
              f"max/min {high / low:.1f}x", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""python -m shared.simgpu [--device h100] [--seed N] PATH/TO/bw.py [PATH/TO/flops.py]

Runs the student's own functions on the simulated GPU: the bandwidth sweep with the cache cliff
marked, measured_bandwidth, the matmul figure, and every GPU sanity check's verdict (one per
timing function it judges), as the grader judges them. Exit 0 when every check passed, 1 when
one failed, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from shared import simgpu
from shared.simgpu import local, verdicts

#: A drop in GB/s by at least this factor from one sweep size to the next marks the cache cliff.
CLIFF_DROP = 1.5
#: Seed of the randomized profile the checks use when --seed is not given.
DEFAULT_SEED = 17
SWEEP_MIB = (8, 32, 128, 512, 2048, 8192)
MATMUL_N = 8192


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m shared.simgpu",
                                description="Run your bw.py / flops.py on a simulated GPU.")
    p.add_argument("paths", nargs="+", type=Path,
                   help="your bw.py and/or flops.py, or a folder holding them")
    p.add_argument("--device", default="h100",
                   help=f"profile to simulate: {', '.join(simgpu.gpu_keys())} (default h100)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help="seed of the randomized profile the checks run on (the grader seeds it from "
                        "your files)")
    return p.parse_args(argv)


def _files(paths) -> list[Path]:
    out = []
    for path in paths:
        if path.is_dir():
            found = [path / f"{m}.py" for m in local.MODULES if (path / f"{m}.py").is_file()]
            if not found:
                raise local.UsageError(f"{path}: holds neither bw.py nor flops.py")
            out += found
        else:
            out.append(path)
    return out


def _call(label, fn):
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - the student's error, shown in one line
        print(f"  {label} raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
        return None


def show_sweep(bw, cfg) -> None:
    l2 = cfg["l2_bytes"]
    print(f"\nbandwidth_sweep({SWEEP_MIB}) on the {cfg['name']}:")
    with simgpu.active(cfg):
        sweep = _call("bandwidth_sweep", lambda: bw.bandwidth_sweep(SWEEP_MIB))
    if not isinstance(sweep, dict):
        return
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


def show_matmul(flops, cfg) -> None:
    with simgpu.active(cfg):
        t = _call("matmul_tflops", lambda: flops.matmul_tflops(MATMUL_N))
    if isinstance(t, (int, float)):
        print(f"matmul_tflops({MATMUL_N}): {t:.0f} TFLOP/s ({t / cfg['peak_tflops']:.2f}x the "
              f"{cfg['peak_tflops']:.0f} TFLOP/s bf16 peak)")


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        cfg = simgpu.config(args.device)
        modules = {p.stem: local.load(p, cfg) for p in _files(args.paths)}
    except (ValueError, local.UsageError) as exc:
        print(f"python -m shared.simgpu: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # noqa: BLE001 - the student's module does not import
        where = f" line {exc.lineno}" if isinstance(exc, SyntaxError) else ""
        print(f"python -m shared.simgpu: your module does not import: {type(exc).__name__}{where}: "
              f"{' '.join(str(exc).split())[:200]}", file=sys.stderr)
        return 1
    print(f"Simulated GPU, {cfg['name']}: {cfg['bw_gbs']:.0f} GB/s memory, {cfg['l2_bytes'] // 2**20} MiB L2, "
          f"{cfg['peak_tflops']:.0f} TFLOP/s bf16, {cfg['memory_bytes'] / 1e9:.0f} GB")
    if "bw" in modules:
        show_sweep(modules["bw"], cfg)
    if "flops" in modules:
        show_matmul(modules["flops"], cfg)
    runner = local.LocalRunner(modules)
    print(f"\nGPU sanity checks (on a randomized {args.device} profile, seed {args.seed}, as the grader does):")
    failed = 0
    for check, verdict in verdicts.VERDICTS.items():
        module = verdicts.MODULE[verdicts.ids()[check][1]]
        if module not in modules:
            print(f"  skip {check}: no {module}.py given")
            continue
        try:
            v = verdict(runner, args.device, args.seed)
        except Exception as exc:  # noqa: BLE001 - the student's code raised
            failed += 1
            print(f"  FAIL {check}: your code raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
            continue
        failed += not v.passed
        print(f"  {'pass' if v.passed else 'FAIL'} {check}: {v.message}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""python -m shared.simgpu [--device h100] [--seed N] [--lesson NAME] PATH/TO/bw.py [PATH/TO/flops.py]

Runs the student's own functions on the simulated GPU: what the lesson shows of them (for why17:
the bandwidth sweep with the cache cliff marked, measured_bandwidth, the matmul figure), then every
GPU sanity check's verdict (one per timing function it judges) under the Break It settings. The
grader judges the same checks with probes of its own in front, so it stays the authority. Exit 0
when every check passed, 1 when one failed, 2 on bad usage.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from shared import lessons, simgpu
from shared.simgpu import local

#: Seed of the randomized profile the checks use when --seed is not given.
DEFAULT_SEED = 17


def parse(argv):
    p = argparse.ArgumentParser(prog="python -m shared.simgpu",
                                description="Run your timing functions on a simulated GPU.")
    p.add_argument("paths", nargs="+", type=Path,
                   help="your bw.py and/or flops.py, or a folder holding them")
    p.add_argument("--device", default="h100",
                   help=f"profile to simulate: {', '.join(simgpu.gpu_keys())} (default h100)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED,
                   help="seed of the randomized profile the checks run on (the grader seeds it from "
                        "your files)")
    p.add_argument("--lesson", default=None,
                   help="the lesson whose checks to run (default: the one whose timing modules these are)")
    return p.parse_args(argv)


def _lesson(name: str | None, stems: set[str]):
    """The lesson's ``gpu`` package: ``name``'s, or the only one whose modules hold ``stems``."""
    found = lessons.rubrics()
    if name is not None:
        if name not in found:
            raise local.UsageError(f"--lesson {name}: no such lesson with GPU checks "
                                   f"(have: {', '.join(sorted(found)) or 'none'})")
        return found[name]
    fits = [gpu for gpu in found.values() if stems <= set(gpu.RUBRIC.module.values())]
    if len(fits) != 1:
        raise local.UsageError("cannot tell which lesson these files belong to: name it with --lesson "
                               f"({', '.join(sorted(found))})")
    return fits[0]


def _files(paths, modules: tuple[str, ...]) -> list[Path]:
    out = []
    for path in paths:
        if path.is_dir():
            found = [path / f"{m}.py" for m in modules if (path / f"{m}.py").is_file()]
            if not found:
                raise local.UsageError(f"{path}: holds none of {', '.join(f'{m}.py' for m in modules)}")
            out += found
        elif path.is_file() and path.stem not in modules:
            expected = " or ".join(f"{m}.py" for m in modules)
            raise local.UsageError(f"{path}: expected {expected}, got {path.name}")
        else:
            out.append(path)
    return out


def main(argv=None) -> int:
    args = parse(sys.argv[1:] if argv is None else argv)
    try:
        cfg = simgpu.config(args.device)
        every = tuple(sorted({m for gpu in lessons.rubrics().values() for m in gpu.RUBRIC.module.values()}))
        files = _files(args.paths, every)
        gpu = _lesson(args.lesson, {p.stem for p in files})
        modules = {p.stem: local.load(p, cfg) for p in files}
    except (ValueError, local.UsageError) as exc:
        print(f"python -m shared.simgpu: {exc}", file=sys.stderr)
        return 2
    except Exception as exc:  # the student's module does not import
        where = f" line {exc.lineno}" if isinstance(exc, SyntaxError) else ""
        print(f"python -m shared.simgpu: your module does not import: {type(exc).__name__}{where}: "
              f"{' '.join(str(exc).split())[:200]}", file=sys.stderr)
        return 1
    print(f"Simulated GPU, {cfg['name']}, the table's numbers: {_profile(cfg)}")
    gpu.show(modules, cfg)
    return judge(gpu, modules, args.device, args.seed)


def _profile(cfg: dict) -> str:
    """A simulated device's figures, in the units the checks' messages use."""
    return (f"{cfg['bw_gbs']:.0f} GB/s memory, {cfg['l2_bytes'] / 2**20:.1f} MiB L2, "
            f"{cfg['peak_tflops']:.0f} TFLOP/s bf16, {cfg['memory_bytes'] / 1e9:.0f} GB")


def judge(gpu, modules: dict, device: str, seed: int) -> int:
    """Print every verdict of the lesson's checks on ``modules``; 1 when one failed, else 0."""
    runner = local.LocalRunner(modules, gpu.model_reference)
    ids = gpu.RUBRIC.ids()
    checked = simgpu.config(device, seed)
    print(f"\nGPU sanity checks, on a randomized {device} profile (seed {seed}): {_profile(checked)}")
    print("(the figures above are the table's; these checks run on this profile, and the grader adds "
          "probes of its own)")
    failed = 0
    for check, verdict in gpu.VERDICTS.items():
        module = gpu.RUBRIC.module[ids[check][1]]
        if module not in modules:
            print(f"  skip {check}: no {module}.py given")
            continue
        try:
            v = verdict(runner, device, seed)
        except Exception as exc:  # the student's code raised
            failed += 1
            print(f"  FAIL {check}: your code raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
            continue
        failed += not v.passed
        print(f"  {'pass' if v.passed else 'FAIL'} {check}: {v.message}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

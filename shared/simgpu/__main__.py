"""python -m shared.simgpu [--device h100] [--seed N] [--lesson NAME] PATH/TO/bw.py [PATH/TO/flops.py]

Runs the student's own functions on the simulated GPU: what the lesson shows of them (for why17:
the bandwidth sweep with the cache cliff marked, measured_bandwidth, the matmul figure), then every
GPU sanity check's verdict (one per timing function it judges) under the Break It settings. As in
the grader, each setting runs in a fresh process of its own (shared/simgpu/processes.py), and so
does the table: a module-level warm-up flag or a thread pool meets every setting new. The grader
judges the same checks with probes of its own in front, so it stays the authority. Exit 0 when
every check passed, 1 when one failed (or a file does not import, or a call hangs past
--time-limit), 2 on bad usage.
"""
from __future__ import annotations

import argparse
import sys
import textwrap
from pathlib import Path

from shared import lessons, simgpu
from shared.simgpu import local, processes, profile

#: Seed of the randomized profile the checks use when --seed is not given.
DEFAULT_SEED = 17
#: Calls of the student's functions the table before the verdicts makes (each has --time-limit).
SHOWN_CALLS = 3


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
    p.add_argument("--time-limit", type=float, default=processes.LIMIT_S, metavar="SECONDS",
                   help=f"the most one call of your functions (or an import) may take, as the grader's "
                        f"limit (default {processes.LIMIT_S:g})")
    p.add_argument("--lesson", default=None,
                   help="the lesson whose checks to run (default: the one whose timing modules these are)")
    return p.parse_args(argv)


def _lesson(name: str | None, stems: set[str]) -> str:
    """The lesson's name: ``name``, or the only lesson whose GPU modules hold ``stems``."""
    found = lessons.rubrics()
    if name is not None:
        if name not in found:
            raise local.UsageError(f"--lesson {name}: no such lesson with GPU checks "
                                   f"(have: {', '.join(sorted(found)) or 'none'})")
        return name
    fits = [lesson for lesson, gpu in found.items() if stems <= set(gpu.RUBRIC.module.values())]
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
        lesson = _lesson(args.lesson, {p.stem for p in files})
        for path in files:
            if not path.is_file():
                raise local.UsageError(f"no such file: {path}")
        if not args.time_limit > 0:
            raise local.UsageError(f"--time-limit must be a positive number of seconds, got {args.time_limit:g}")
    except (ValueError, local.UsageError) as exc:
        print(f"python -m shared.simgpu: {exc}", file=sys.stderr)
        return 2
    processes.prepare()          # torch is imported once, here, before the processes that run your code
    paths = {p.stem: str(p) for p in files}
    limit = args.time_limit
    failed = _apart(processes.import_files, (paths,), limit, f"{', '.join(f'{m}.py' for m in paths)} did not finish "
                                              f"importing within {limit:g} s")
    header = f"Simulated GPU, {cfg['name']}, the table's numbers: {_profile(cfg)}"
    failed = failed or _apart(processes.show, (lesson, paths, cfg, header), limit * SHOWN_CALLS,
                              f"what the table shows did not finish within {limit * SHOWN_CALLS:g} s: "
                              "one of your functions does not return")
    if failed:
        return 1
    gpu = lessons.rubrics()[lesson]
    with processes.ProcessRunner({m: Path(p) for m, p in paths.items()}, gpu.model_reference, limit) as runner:
        return judge(gpu, runner, args.device, args.seed)


def _apart(step, args: tuple, limit_s: float, late: str) -> bool:
    """Run ``step(*args)`` in a process of its own; True (after one line) when it failed."""
    code = processes.run_apart(step, args, limit_s)
    if code is None:
        print(f"python -m shared.simgpu: {late}", file=sys.stderr)
    elif code == processes.IMPORT_FAILED:
        pass                                  # the step said why, in one line
    elif code != 0:
        print(f"python -m shared.simgpu: the process running your code ended (exit code {code})",
              file=sys.stderr)
    return code != 0


def _profile(cfg: dict) -> str:
    """A simulated device's figures, in the units the checks' messages use."""
    return (f"{cfg['bw_gbs']:.0f} GB/s memory, {cfg['l2_bytes'] / 2**20:.1f} MiB L2, "
            f"{cfg['peak_tflops']:.0f} TFLOP/s bf16, {cfg['memory_bytes'] / 1e9:.0f} GB")


def randomized_note(table: dict, seed: int) -> str:
    """Why the checks' profile differs from the table's ``table``: its figures are drawn per seed, so a
    number assumed from the spec sheet (an L2 size, a bandwidth) fails here as at the grader."""
    ranges = profile.constants()["randomize"]

    def span(key: str) -> str:
        low, high = ranges[key]
        return f"{low:g}x to {high:g}x"
    l2_mib = table["l2_bytes"] / 2**20
    return textwrap.fill(f"(the figures above are the table's, the real device's: {l2_mib:.1f} MiB L2. "
            f"These checks run on a profile drawn from --seed {seed}: L2 {span('l2')} the table's, bandwidth "
            f"{span('bw')}, peak {span('peak')}, so a buffer sized or a rate assumed from the spec sheet "
            f"fails here as at the grader; size the buffer from shared.devices.last_level_cache_bytes. "
            f"The grader adds probes of its own)", width=100)


def judge(gpu, runner, device: str, seed: int) -> int:
    """Print every verdict of the lesson's checks through ``runner`` (each setting in a process of
    its own: processes.ProcessRunner); 1 when one failed, else 0."""
    ids = gpu.RUBRIC.ids()
    checked = simgpu.config(device, seed)
    print(f"\nGPU sanity checks, on a randomized {device} profile (seed {seed}): {_profile(checked)}")
    print(randomized_note(simgpu.config(device), seed))
    failed = 0
    for check, verdict in gpu.VERDICTS.items():
        module = gpu.RUBRIC.module[ids[check][1]]
        if module not in runner.files:
            print(f"  skip {check}: no {module}.py given")
            continue
        try:
            v = verdict(runner, device, seed)
        except processes.StudentFailed as exc:   # raised, hung, crashed or did not import
            failed += 1
            print(f"  FAIL {check}: {exc}")
            continue
        except Exception as exc:  # the student's code raised
            failed += 1
            print(f"  FAIL {check}: your code raised {type(exc).__name__}: {' '.join(str(exc).split())[:200]}")
            continue
        failed += not v.passed
        print(f"  {'pass' if v.passed else 'FAIL'} {check}: {v.message}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""Calibration: the reference against the device's spec, and every GPU-check submission through
every check, as one table of ratios and verdicts.

``python -m autograder calibrate --device cuda`` measures on this machine's GPU (at most
BUDGET_S seconds): the reference's copy bandwidth from 256 MiB to 4 GiB and matmul at 4096 and
8192 over the hardware table's spec (device matched by name), then each submission in
the assignment's fixtures/gpu submissions through the real-GPU verdicts (realgpu.py), one fresh process per
submission so that its first copy is cold. ``--device sim`` prints the same table on the
simulated device (course.yml's profile), in this process, so CI runs the command.

The submissions are the project's own (trusted): they run without the sandbox. Each is built by
the grader package's fixtures/build.py (``gpu_submission``: a wrong_* folder stores its mistake as
a mistake.yml, and its other file comes from good_events), as in tests/lessons/why17/test_gpu_checks.py.
"""
from __future__ import annotations

import importlib
import importlib.util
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from autograder.lessons.why17.checks.gpu import VERDICTS
from shared import tables, yamlfile
from shared.lessons.why17.gpu import RUBRIC
from shared.simgpu.judging import Verdict
from shared.simgpu.ratios import fmt_ratio

#: The checkout: the real-GPU child runs from it.
ROOT = Path(__file__).resolve().parents[3]
#: The GPU-check submissions: this package's fixtures/gpu.
SUBMISSIONS = Path(__file__).resolve().parent / "fixtures" / "gpu"
#: The check each mistake submission must fail (and only that one on the simulated device).
EXPECTED = yamlfile.safe_load((SUBMISSIONS / "expected.yml").read_text(encoding="utf-8"))
#: Copy sizes of the reference-vs-spec rows, MiB; matmul sides, elements.
SWEEP_MIB = (256, 512, 1024, 2048, 4096)
MATMUL_SIZES = (4096, 8192)
#: Timed copies / matmuls per reference-vs-spec figure.
SPEC_ITERS = 20
#: Wall-clock budget of a calibration on one GPU, seconds (the issue: at most 5 minutes).
BUDGET_S = 300.0
#: Seed of the randomized simulated profile the checks run on (as ``python -m shared.simgpu``).
SEED = 17


@dataclass
class SpecRow:
    """One reference figure over the spec: ``what`` ('copy 256 MiB'), both in ``unit``."""

    what: str
    measured: float | None
    spec: float | None
    unit: str


@dataclass
class SubmissionRow:
    """One submission's verdicts by check id (missing: not measured, with ``note`` saying why)."""

    name: str
    verdicts: dict = field(default_factory=dict)
    note: str = ""

    @property
    def expected(self) -> str | None:
        return EXPECTED.get(self.name)

    def problems(self) -> list[str]:
        """Where this row disagrees with its name: a good one failing, a wrong one passing its check."""
        if self.note:
            return [f"{self.name}: {self.note}"]
        if self.expected:
            v = self.verdicts.get(self.expected)
            return [] if v is not None and not v.passed else [f"{self.name} passes {self.expected}"]
        return [f"{self.name} fails {c}" for c, v in self.verdicts.items() if not v.passed]


# --------------------------------------------------------------------------- the device
def match_device(gpu_name: str) -> tables.Device | None:
    """The hardware-table entry for a CUDA device name ('NVIDIA H100 80GB HBM3' -> h100-sxm), or None:
    shared.tables.device_for_gpu_name, the matcher the student's notebook uses too."""
    return tables.device_for_gpu_name(gpu_name)


# --------------------------------------------------------------------------- the submissions
def submissions(dest: Path, folder: Path = SUBMISSIONS) -> list[tuple[str, dict[str, Path]]]:
    """(name, {'bw': path, 'flops': path}) of every good_* and wrong_* folder, goods first, each
    built into dest/<name> by the grader package's ``fixtures.build.gpu_submission``."""
    build = importlib.import_module(f"{__package__}.fixtures.build")
    out = []
    for path in sorted(folder.iterdir(), key=lambda p: (not p.name.startswith("good_"), p.name)):
        if path.is_dir() and path.name.startswith(("good_", "wrong_")):
            built = build.gpu_submission(path.name, dest / path.name)
            out.append((path.name, {m: built / f"{m}.py" for m in ("bw", "flops")}))
    return out


def _load(path: Path, name: str, cfg: dict | None):
    """Import ``path`` as module ``name`` (on the simulated device ``cfg`` when given)."""
    from shared import simgpu

    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    if cfg is None:
        spec.loader.exec_module(module)
    else:
        simgpu.install()
        with simgpu.active(cfg):
            spec.loader.exec_module(module)
    return module


class SimRunner:
    """judging.Runner over a submission and the reference imported in this process."""

    def __init__(self, student: dict, reference: dict):
        self.modules = {"student": student, "reference": reference}
        self.memo: dict = {}      # the verdicts' shared calls (shared.simgpu.judging.Session)

    def _run(self, who, module, function, args, sim, kwargs):
        from shared import simgpu

        with simgpu.active(sim):
            return getattr(self.modules[who][module], function)(*args, **kwargs)

    def student(self, module, function, *args, sim, **kwargs):
        return self._run("student", module, function, args, sim, kwargs)

    def student_traced(self, module, function, *args, sim, **kwargs):
        from shared import simgpu

        value = self._run("student", module, function, args, sim, kwargs)
        return value, simgpu.trace()

    def reference(self, module, function, *args, sim, **kwargs):
        return self._run("reference", module, function, args, sim, kwargs)


# --------------------------------------------------------------------------- the two devices
def calibrate_sim(reference_dir: Path, profile: str,
                  seed: int = SEED) -> tuple[str, list[SpecRow], list[SubmissionRow]]:
    """The table's content on the simulated ``profile``: (device line, spec rows, submission rows);
    ``reference_dir``: the assignment's reference solution (its bw.py and flops.py)."""
    from shared import simgpu

    dev = tables.device(profile)
    cfg = simgpu.config(profile)
    reference = {m: _load(reference_dir / f"{m}.py", f"calibrate_ref_{m}", cfg) for m in ("bw", "flops")}
    spec = _spec_rows(reference, dev, lambda fn: _on_sim(cfg, fn))
    rows = []
    with tempfile.TemporaryDirectory(prefix="grader-calibrate-") as tmp:
        for name, files in submissions(Path(tmp)):
            student = {m: _load(p, f"calibrate_{name}_{m}", cfg) for m, p in files.items()}
            row = SubmissionRow(name)
            runner = SimRunner(student, reference)
            for check, verdict in VERDICTS.items():
                try:
                    row.verdicts[check] = verdict(runner, profile, seed)
                except Exception as exc:  # a submission that raises fails the check
                    row.verdicts[check] = Verdict(check, False, f"raised {type(exc).__name__}: {exc}")
            rows.append(row)
    return f"simulated {dev.name} (profile {profile}, checks on seed {seed})", spec, rows


def _on_sim(cfg, fn):
    from shared import simgpu

    with simgpu.active(cfg):
        return fn()


def _spec_rows(reference: dict, dev: tables.Device | None, run=lambda fn: fn()) -> list[SpecRow]:
    """The reference's copy GB/s and bf16 TFLOP/s over ``dev``'s spec ('-' where it raised, e.g.
    a 4 GiB copy that does not fit on a small GPU: the error goes to stderr)."""
    def measured(what, fn):
        try:
            return float(run(fn))
        except Exception as exc:  # one figure missing, not the whole table
            print(f"calibrate: {what}: {type(exc).__name__}: {' '.join(str(exc).split())[:200]}", file=sys.stderr)
            return None

    bw_spec = dev.bw_gbs if dev else None
    tf_spec = dev.peak_bf16_tflops if dev else None
    rows = [SpecRow(f"copy {mib} MiB", measured(f"copy {mib} MiB", lambda mib=mib: reference["bw"].copy_bandwidth(
        mib * 2**20, iters=SPEC_ITERS)), bw_spec, "GB/s") for mib in SWEEP_MIB]
    rows += [SpecRow(f"matmul {n} bf16", measured(f"matmul {n}", lambda n=n: reference["flops"].matmul_tflops(
        n, iters=SPEC_ITERS)), tf_spec, "TFLOP/s") for n in MATMUL_SIZES]
    return rows


def calibrate_cuda(reference_dir: Path, budget_s: float = BUDGET_S) -> tuple[str, list[SpecRow], list[SubmissionRow]]:
    """The table's content measured on this machine's GPU within ``budget_s`` seconds;
    ``reference_dir``: the assignment's reference solution."""
    import torch

    from autograder.lessons.why17 import realgpu

    started = time.monotonic()
    gpu = torch.cuda.get_device_name(0)
    dev = match_device(gpu)
    reference = {m: _load(reference_dir / f"{m}.py", f"calibrate_ref_{m}", None) for m in ("bw", "flops")}
    spec = _spec_rows(reference, dev)
    torch.cuda.empty_cache()
    rows = []
    with tempfile.TemporaryDirectory(prefix="grader-calibrate-") as tmp:
        for name, files in submissions(Path(tmp)):
            left = budget_s - (time.monotonic() - started)
            if left < 10:
                rows.append(SubmissionRow(name, note="not measured: the time budget ran out"))
                continue
            try:
                done = subprocess.run([sys.executable, "-m", "autograder.lessons.why17.realgpu_pair",
                                       str(files["bw"].parent), str(reference_dir)],
                                      capture_output=True, text=True, timeout=left, cwd=ROOT)
            except subprocess.TimeoutExpired:
                rows.append(SubmissionRow(name, note="not measured: the time budget ran out"))
                continue
            lines = done.stdout.strip().splitlines()
            if done.returncode != 0 or not lines:
                tail = (done.stderr.strip().splitlines() or ["no output"])[-1]
                rows.append(SubmissionRow(name, note=f"measurement failed: {tail[:120]}"))
                continue
            rows.append(SubmissionRow(name, verdicts=realgpu.judge(json.loads(lines[-1]))))
    matched = f"spec: {dev.name} ({dev.key})" if dev else "no spec in shared/data/hardware.yml for this name"
    return f"{gpu} (CUDA; {matched}; {time.monotonic() - started:.0f} s)", spec, rows


# --------------------------------------------------------------------------- the table
def _cell(v: Verdict | None, expected: bool) -> str:
    if v is None:
        return "-"
    ratio = fmt_ratio(v.ratio) if v.ratio is not None else "?"
    return f"{ratio} {'ok' if v.passed else 'FAIL'}{'*' if expected else ''}"


def _base(vid: str) -> str:
    """The check of instance id ``vid``: 'sync_present.matmul_tflops' -> 'sync_present'."""
    return vid.split(".", 1)[0]


def _shown(row: SubmissionRow, check: str) -> tuple[str | None, Verdict | None]:
    """The instance shown in ``check``'s column: the expected one, else a failing one, else the first."""
    mine = [vid for vid in row.verdicts if _base(vid) == check]
    if row.expected in mine:
        return row.expected, row.verdicts[row.expected]
    pick = next((vid for vid in mine if not row.verdicts[vid].passed), mine[0] if mine else None)
    return pick, row.verdicts.get(pick) if pick else None


def format_table(device_line: str, spec: list[SpecRow], rows: list[SubmissionRow]) -> str:
    """One table: the reference over the spec, then each submission's ratio and verdict per check
    ('*' marks the check a wrong_* submission must fail), then a line on any disagreement.

    A column holds one check over every function it judges (``sync_present.matmul_tflops`` shows
    under sync_present): the instance the submission must fail, else a failing one, else the first.
    """
    checks = list(RUBRIC.checks)
    lines = [f"Calibration on the {device_line}", ""]
    head = ["reference", "measured", "spec", "ratio"]
    body = [[s.what, f"{s.measured:.4g} {s.unit}" if s.measured else "-", f"{s.spec:g} {s.unit}" if s.spec else "-",
             f"{s.measured / s.spec:.2f}x" if s.measured and s.spec else "-"] for s in spec]
    lines += _grid(head, body) + [""]
    body = [[r.name] + ([r.note] + [""] * (len(checks) - 1) if r.note else
                        [_cell(_shown(r, c)[1], _shown(r, c)[0] == r.expected) for c in checks]) for r in rows]
    lines += _grid(["submission"] + checks, body)
    problems = [p for r in rows for p in r.problems()]
    lines += ["", "every good submission passes every check and every wrong one fails its own: "
              + ("yes" if not problems else "NO: " + "; ".join(problems))]
    return "\n".join(lines)


def _grid(head: list[str], body: list[list[str]]) -> list[str]:
    widths = [max(len(str(x)) for x in col) for col in zip(head, *body, strict=True)]
    fmt = lambda cells: "  ".join(str(c).ljust(w) for c, w in zip(cells, widths, strict=False)).rstrip()  # noqa: E731
    return [fmt(head), fmt(["-" * w for w in widths])] + [fmt(b) for b in body]

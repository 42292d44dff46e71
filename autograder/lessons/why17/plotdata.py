"""The numbers behind a student's feedback plots, stored in results.json under the key "why17".

Gradescope ignores unknown top-level keys, so results.json carries them and feedback.html can be
rebuilt from results.json alone. Source: the student's measurements.json (the Measure table the lab
notebook writes), read as data with the grader's safe loader, never executed. Schema::

    "why17": {
      "source": "measurements.json",
      "device": {"name": str, "key": str | null,            # the machine the student measured
                 "bw_gbs": float | null,                     # spec main-memory bandwidth, GB/s
                 "peak_tflops": float | null,                # spec dense BF16 peak, TFLOP/s
                 "l2_bytes": int | null,                     # spec last-level cache, bytes (the cliff)
                 "llc_bytes": int | null,                    # the cache the student's machine reported
                 "type": "cuda" | "cpu", "threads": int | null},   # torch's CPU threads
      "sweep_gbs": {"8": float, ...},                        # student's sweep: MiB -> GB/s (median)
      "sweep_runs_gbs": {"8": [float, ...], ...},            # each repeat, when the sweep was repeated
      "device_sweep_gbs": {"8": float, ...},                 # what that device gives at each size
      "bw_gbs": float, "peak_tflops": float,                 # student's measured roofs
      "points": [{"label": str, "intensity": float,          # FLOPs/byte
                  "tflops": float}]                          # attained TFLOP/s
    }

The device's curve follows the simulated GPU's model (shared/data/simgpu.yml): a copy whose two
buffers fit in the L2 runs at ``l2_speedup`` x the main-memory copy rate; otherwise at the copy
efficiency of the memory kind times the spec bandwidth.
"""
from __future__ import annotations

import math
from functools import lru_cache
from pathlib import Path, PurePosixPath

import yaml

from autograder.api import JUNK_NAMES, SEARCH_DEPTH
from autograder.core import ziplimits
from shared import yamlfile

ROOT = Path(__file__).resolve().parents[3]
SIMGPU_FILE = ROOT / "shared" / "data" / "simgpu.yml"
FILENAME = "measurements.json"
#: Sizes (MiB) of the device curve (within the student's range, plus the student's own sizes).
DEFAULT_SIZES_MIB = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)


def read_measurements(path: Path, max_bytes: int) -> bytes | None:
    """The bytes of the shallowest measurements.json in a submission folder or zip, or None."""
    path = Path(path)
    if path.is_file():
        try:
            with ziplimits.open_zip(path) as zf:
                best = None
                for info in zf.infolist():
                    parts = PurePosixPath(info.filename).parts
                    if (parts and parts[-1] == FILENAME and len(parts) <= SEARCH_DEPTH
                            and not any(p in JUNK_NAMES for p in parts) and ".." not in parts
                            and info.file_size <= max_bytes):
                        if best is None or len(parts) < len(PurePosixPath(best.filename).parts):
                            best = info
                if best is None:
                    return None
                with zf.open(best) as fh:
                    return fh.read(max_bytes + 1)
        except ziplimits.READ_ERRORS:   # ZipRefused is a ValueError
            return None
    for depth in range(SEARCH_DEPTH):
        for candidate in sorted(path.glob("/".join(["*"] * depth + [FILENAME]))):
            if any(p in JUNK_NAMES for p in candidate.relative_to(path).parts):
                continue
            if candidate.is_file() and not candidate.is_symlink():
                try:
                    with open(candidate, "rb") as fh:
                        return fh.read(max_bytes + 1)
                except OSError:
                    return None
    return None


@lru_cache(maxsize=1)
def _simgpu() -> dict:
    try:
        return yamlfile.safe_load(SIMGPU_FILE.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError):
        return {}


def device_curve(key: str | None, sizes_mib) -> tuple[dict, dict]:
    """(device facts, MiB -> GB/s the device gives a copy of that size) for a tables key."""
    if not key:
        return {"key": None}, {}
    from shared import tables
    try:
        dev = tables.device(key)
    except Exception:  # an unknown key: the checks say so; the plot just has no device curve
        return {"key": key}, {}
    sim = _simgpu()
    kind = ((sim.get("devices") or {}).get(dev.key) or {}).get("memory_kind", "hbm")
    eff = float(((sim.get("efficiency") or {}).get("copy") or {}).get(kind, 0.875))
    speedup = float((sim.get("efficiency") or {}).get("l2_speedup", 3.0))
    main = dev.bw_gbs * eff
    curve = {}
    for size in sizes_mib:
        working_set = 2 * size * 2**20
        curve[f"{size:g}"] = round(main * speedup if working_set <= dev.l2_bytes else main, 3)
    facts = {"name": dev.name, "key": dev.key, "bw_gbs": dev.bw_gbs,
             "peak_tflops": dev.peak_bf16_tflops, "l2_bytes": dev.l2_bytes}
    return facts, curve


def _finite(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def from_measurements(data: bytes) -> dict | None:
    """Plot data from the bytes of a measurements.json; None when it does not parse."""
    from autograder.lessons.why17 import measurements
    try:
        table = measurements.parse(data)
    except measurements.MeasurementsError:
        return None
    sweep = {}
    for size, gbs in (table.sweep_gbs_by_mib or {}).items():
        try:
            size_f = float(size)
        except (TypeError, ValueError):
            continue
        if _finite(gbs) and size_f > 0:
            sweep[f"{size_f:g}"] = float(gbs)
    sizes = sorted(float(s) for s in sweep)
    curve_sizes = (sorted(set(sizes) | {s for s in DEFAULT_SIZES_MIB if sizes[0] <= s <= sizes[-1]})
                   if len(sizes) >= 2 else DEFAULT_SIZES_MIB)
    facts, curve = device_curve(table.device_key, curve_sizes)
    facts["name"] = table.device_name or facts.get("name") or "unknown device"
    facts["llc_bytes"] = table.llc_bytes or facts.get("l2_bytes")
    facts["type"] = table.device_type
    facts["threads"] = table.threads
    runs = {f"{float(size):g}": list(values) for size, values in table.sweep_runs_gbs_by_mib.items()
            if f"{float(size):g}" in sweep}
    points = []
    for row in table.rows:
        if not (_finite(row.bytes_per_weight) and row.bytes_per_weight > 0 and _finite(row.params_read)):
            continue
        intensity = 2.0 / row.bytes_per_weight       # 2 FLOPs per weight read, bytes per weight
        tflops = row.measured_tok_s * 2.0 * row.params_read / 1e12
        points.append({"label": f"{row.model} decode", "intensity": intensity, "tflops": tflops})
    return {"source": FILENAME, "device": facts, "sweep_gbs": sweep, "sweep_runs_gbs": runs,
            "device_sweep_gbs": curve,
            "bw_gbs": table.bw_gbs, "peak_tflops": table.peak_tflops, "points": points}


def collect(path: Path) -> dict | None:
    """Plot data for the submission at ``path`` (folder or zip), or None without a usable table."""
    from autograder.lessons.why17 import measurements
    data = read_measurements(Path(path), measurements.MAX_BYTES)
    if data is None or len(data) > measurements.MAX_BYTES:
        return None
    return from_measurements(data)

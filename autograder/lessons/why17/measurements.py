"""measurements.json: the Measure table as data, its schema, and a safe loader.

The lab notebook (why17.ipynb) writes it; the task5 checks (autograder/lessons/why17/checks/measure_table.py)
read it. It is DATA, never code: parsed with ``json`` only, size-capped, every field type-checked.
Units are in the field names: GB/s = 1e9 bytes/s, TFLOP/s = 1e12 FLOP/s, MiB = 2**20 bytes.

Schema (version ``why17-measurements/2``; a ``/1`` file is the same without the optional keys)::

    {
      "schema": "why17-measurements/2",
      "device": {"name": "NVIDIA H100 80GB HBM3",   # what torch reports
                 "key": "h100-sxm",                 # a shared.tables device key, or null (a CPU)
                 "type": "cuda",                    # "cuda" or "cpu"
                 "llc_bytes": 52428800,             # optional: last-level cache, bytes, or null
                 "threads": null,                   # optional: torch's CPU threads, or null
                 "simulated": false},               # optional: true for a run on the simulated GPU
      "bw_gbs": 2950.0,                 # measured main-memory bandwidth, GB/s (bw.measured_bandwidth)
      "bw_runs_gbs": [2941.0, 2950.0],  # optional: each run; bw_gbs is one of them (the best)
      "peak_tflops": 700.0,             # measured matmul peak, TFLOP/s (flops.measured_peak_tflops)
      "peak_runs_tflops": [695.0, 700.0],   # optional: each run; peak_tflops is one of them (the best)
      "ridge_flops_per_byte": 237.3,    # peak_tflops * 1e12 / (bw_gbs * 1e9), FLOPs per byte
      "sweep_gbs_by_mib": {"8": 9000.0, "32": 8100.0, ...},   # buffer MiB -> copy GB/s (median)
      "sweep_runs_gbs_by_mib": {"8": [8900.0, 9000.0, 9050.0], ...},  # optional: each repeat
      "rows": [                         # the Measure table, one row per model
        {"model": "llama-3.1-8b",       # a shared.tables model key
         "params_read": 7504924672,     # parameters read per decode token
         "bytes_per_weight": 2.0,       # bytes per weight (2 for bf16)
         "ceiling_tok_s": 196.5,        # bw_gbs * 1e9 / (params_read * bytes_per_weight), tokens/s
         "measured_tok_s": 150.2,       # tokens/s the decode benchmark measured (median)
         "measured_tok_s_runs": [149.0, 150.2, 151.1],   # optional: each run
         "pct_of_ceiling": 76.4}        # 100 * measured_tok_s / ceiling_tok_s, percent
      ]
    }

Optional keys may be left out; a figure with runs must lie within their min-max (it is one of
them or their median), so one measurement is quoted as one figure.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from autograder.core import bounded
from shared import simulated_run

FILENAME = "measurements.json"
SCHEMA = "why17-measurements/2"
#: Older schemas still read: the same fields without the optional ones.
OLD_SCHEMAS = ("why17-measurements/1",)
#: Most repeats of one measurement.
MAX_RUNS = 64
#: Largest measurements.json read, in bytes; a Measure table is a few KiB.
MAX_BYTES = 256 * 1024
#: How the file is parsed: MAX_BYTES of text, nested at most 32 deep (the table nests 4).
LIMITS = bounded.Limits(max_bytes=MAX_BYTES, max_depth=32)
#: Most rows in the Measure table.
MAX_ROWS = 64
#: Most buffer sizes in the sweep.
MAX_SWEEP = 64
#: Most digits of a buffer size in MiB (a billion MiB is a petabyte).
MAX_SIZE_DIGITS = 9
DEVICE_TYPES = ("cuda", "cpu")

_TOP = ("schema", "device", "bw_gbs", "peak_tflops", "ridge_flops_per_byte", "sweep_gbs_by_mib", "rows")
_DEVICE = ("name", "key", "type")
_OPTIONAL = {"top": ("bw_runs_gbs", "peak_runs_tflops", "sweep_runs_gbs_by_mib"),
             "device": ("llc_bytes", "threads", simulated_run.FIELD),
             "row": ("measured_tok_s_runs",)}
_ROW = ("model", "params_read", "bytes_per_weight", "ceiling_tok_s", "measured_tok_s", "pct_of_ceiling")


class MeasurementsError(ValueError):
    """measurements.json is missing, too large, not JSON, or does not follow the schema (one line)."""


@dataclass(frozen=True)
class Row:
    """One row of the Measure table; units in the field names (tokens/s, percent)."""

    model: str
    params_read: float
    bytes_per_weight: float
    ceiling_tok_s: float
    measured_tok_s: float
    pct_of_ceiling: float
    measured_tok_s_runs: tuple = ()     # each run, tokens/s; () when not repeated


@dataclass(frozen=True)
class Measurements:
    """The whole file. ``device_key`` is a shared.tables key or None (no spec to compare with)."""

    device_name: str
    device_key: str | None
    device_type: str
    bw_gbs: float
    peak_tflops: float
    ridge_flops_per_byte: float
    sweep_gbs_by_mib: dict
    rows: tuple
    schema: str = SCHEMA
    llc_bytes: int | None = None        # last-level cache, bytes
    threads: int | None = None          # torch's CPU threads
    bw_runs_gbs: tuple = ()             # each bandwidth run, GB/s
    peak_runs_tflops: tuple = ()        # each matmul peak run, TFLOP/s
    sweep_runs_gbs_by_mib: dict = field(default_factory=dict)   # MiB -> each repeat's GB/s
    simulated: bool = False             # a run on the simulated GPU (shared.simulated_run), not a machine's
    simulated_why: str = ""             # how the file shows it, for a message; "" when not simulated


def load(path: Path | str) -> Measurements:
    """Read and validate the file at ``path``; MeasurementsError names the problem."""
    path = Path(path)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_BYTES + 1)
    except FileNotFoundError:
        raise MeasurementsError(f"{FILENAME} is missing: run the lab notebook why17.ipynb to the end, "
                                f"it writes the Measure table there") from None
    except OSError as exc:
        raise MeasurementsError(f"{FILENAME}: cannot read it ({exc.strerror})") from None
    return parse(data)


def parse(data: bytes | str) -> Measurements:
    """Validate the text of a measurements.json; MeasurementsError names the first wrong field."""
    raw = _json(data)
    new = _schema(raw)
    _keys(raw, _TOP, "the top level", _OPTIONAL["top"] if new else ())
    device = _device(raw["device"], new)
    sweep_gbs = _sweep(raw["sweep_gbs_by_mib"])
    rows = _rows(raw["rows"], new)
    bw_gbs = _positive(raw["bw_gbs"], "bw_gbs", "GB/s")
    bw_runs = _runs(raw["bw_runs_gbs"], "bw_runs_gbs", "GB/s", bw_gbs) if "bw_runs_gbs" in raw else ()
    peak = _positive(raw["peak_tflops"], "peak_tflops", "TFLOP/s")
    peak_runs = (_runs(raw["peak_runs_tflops"], "peak_runs_tflops", "TFLOP/s", peak)
                 if "peak_runs_tflops" in raw else ())
    sweep_runs = _sweep_runs(raw, sweep_gbs)
    return Measurements(schema=raw["schema"],
                        llc_bytes=_optional_int(device.get("llc_bytes"), "device.llc_bytes", "bytes"),
                        threads=_optional_int(device.get("threads"), "device.threads", "threads"),
                        bw_runs_gbs=bw_runs, peak_runs_tflops=peak_runs, sweep_runs_gbs_by_mib=sweep_runs,
                        device_name=device["name"], device_key=device["key"], device_type=device["type"],
                        bw_gbs=bw_gbs,
                        peak_tflops=peak,
                        ridge_flops_per_byte=_positive(raw["ridge_flops_per_byte"], "ridge_flops_per_byte",
                                                       "FLOPs/byte"),
                        sweep_gbs_by_mib=sweep_gbs, rows=rows,
                        simulated=simulated_run.is_simulated(device),
                        simulated_why=simulated_run.why(device) if simulated_run.is_simulated(device) else "")


def _json(data: bytes | str):
    """The JSON value in ``data`` (at most MAX_BYTES bytes of UTF-8, no NaN or Infinity), read by
    the bounded loader every file a student places goes through."""
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    if len(data) > MAX_BYTES:
        raise MeasurementsError(f"{FILENAME} is larger than {MAX_BYTES // 1024} KiB; "
                                f"the Measure table is a few KiB")
    try:
        return bounded.load_json(data, LIMITS, constant=_no_constant)
    except bounded.Refused as exc:
        raise MeasurementsError(f"{FILENAME} {_clip(exc.reason)}") from None


def _schema(raw) -> bool:
    """Whether ``raw`` is of the current schema (its optional keys allowed); an unknown one refused."""
    if isinstance(raw, dict) and raw.get("schema") not in (SCHEMA, *OLD_SCHEMAS) and "schema" in raw:
        raise MeasurementsError(f"{FILENAME}: 'schema' must be {SCHEMA!r} (or the older "
                                f"{', '.join(map(repr, OLD_SCHEMAS))}), got {_show(raw['schema'])}")
    return isinstance(raw, dict) and raw.get("schema") == SCHEMA


def _device(device, new: bool) -> dict:
    """The 'device' object, its name, key and type checked (``new``: its optional keys allowed)."""
    _keys(device, _DEVICE, "'device'", _OPTIONAL["device"] if new else ())
    if not isinstance(device["name"], str) or not device["name"].strip():
        raise MeasurementsError(f"{FILENAME}: 'device.name' must be a non-empty string")
    if device["key"] is not None and not isinstance(device["key"], str):
        raise MeasurementsError(f"{FILENAME}: 'device.key' must be a device key string or null")
    if simulated_run.FIELD in device and not isinstance(device[simulated_run.FIELD], bool):
        raise MeasurementsError(f"{FILENAME}: 'device.{simulated_run.FIELD}' must be true or false, "
                                f"got {_show(device[simulated_run.FIELD])}")
    if device["type"] not in DEVICE_TYPES:
        raise MeasurementsError(f"{FILENAME}: 'device.type' must be one of {', '.join(DEVICE_TYPES)}, "
                                f"got {_show(device['type'])}")
    return device


def _sweep(sweep) -> dict:
    """'sweep_gbs_by_mib' as buffer size in MiB (int) -> copy bandwidth in GB/s."""
    if not isinstance(sweep, dict) or not sweep or len(sweep) > MAX_SWEEP:
        raise MeasurementsError(f"{FILENAME}: 'sweep_gbs_by_mib' must map 1 to {MAX_SWEEP} buffer sizes "
                                f"in MiB to GB/s")
    sweep_gbs = {}
    for size, gbs in sweep.items():
        # ASCII digits only: str.isdigit also takes superscripts ('²'), which int() refuses
        if not (size.isascii() and size.isdigit() and len(size) <= MAX_SIZE_DIGITS) or int(size) <= 0:
            raise MeasurementsError(f"{FILENAME}: 'sweep_gbs_by_mib' keys are buffer sizes in MiB "
                                    f"(positive integers of at most {MAX_SIZE_DIGITS} digits), got {_show(size)}")
        sweep_gbs[int(size)] = _positive(gbs, f"sweep_gbs_by_mib[{_show(size)}]", "GB/s")
    return sweep_gbs


def _rows(rows, new: bool) -> tuple:
    """The Measure table's rows (``new``: their optional keys allowed)."""
    if not isinstance(rows, list) or not rows or len(rows) > MAX_ROWS:
        raise MeasurementsError(f"{FILENAME}: 'rows' must be a list of 1 to {MAX_ROWS} Measure table rows")
    return tuple(_row(row, f"rows[{i}]", new) for i, row in enumerate(rows))


def _row(row, where: str, new: bool) -> Row:
    """One Measure table row, ``where`` naming it in messages (``rows[2]``)."""
    _keys(row, _ROW, where, _OPTIONAL["row"] if new else ())
    if not isinstance(row["model"], str) or not row["model"]:
        raise MeasurementsError(f"{FILENAME}: '{where}.model' must be a model key string")
    measured = _positive(row["measured_tok_s"], f"{where}.measured_tok_s", "tokens/s")
    runs = (_runs(row["measured_tok_s_runs"], f"{where}.measured_tok_s_runs", "tokens/s", measured)
            if "measured_tok_s_runs" in row else ())
    return Row(model=row["model"],
               params_read=_positive(row["params_read"], f"{where}.params_read", "parameters"),
               bytes_per_weight=_positive(row["bytes_per_weight"], f"{where}.bytes_per_weight", "bytes"),
               ceiling_tok_s=_positive(row["ceiling_tok_s"], f"{where}.ceiling_tok_s", "tokens/s"),
               measured_tok_s=measured,
               pct_of_ceiling=_positive(row["pct_of_ceiling"], f"{where}.pct_of_ceiling", "percent"),
               measured_tok_s_runs=runs)


def _sweep_runs(raw: dict, sweep_gbs: dict) -> dict:
    """'sweep_runs_gbs_by_mib' (optional) as buffer size in MiB -> each repeat's GB/s; {} when absent."""
    sweep_runs = {}
    if "sweep_runs_gbs_by_mib" in raw:
        given = raw["sweep_runs_gbs_by_mib"]
        if not isinstance(given, dict) or set(given) - set(raw["sweep_gbs_by_mib"]):
            raise MeasurementsError(f"{FILENAME}: 'sweep_runs_gbs_by_mib' must map sizes of "
                                    f"'sweep_gbs_by_mib' to lists of runs in GB/s")
        for size, values in given.items():
            sweep_runs[int(size)] = _runs(values, f"sweep_runs_gbs_by_mib[{size!r}]", "GB/s",
                                          sweep_gbs[int(size)])
    return sweep_runs


def _no_constant(name: str):
    raise MeasurementsError(f"{FILENAME}: {name} is not a measurement; write a positive finite number")


def _keys(raw, names: tuple, where: str, optional: tuple = ()) -> None:
    if not isinstance(raw, dict):
        raise MeasurementsError(f"{FILENAME}: {where} must be a JSON object")
    missing = [k for k in names if k not in raw]
    if missing:
        raise MeasurementsError(f"{FILENAME}: {where} is missing {', '.join(repr(k) for k in missing)}")
    extra = sorted(k for k in raw if k not in names and k not in optional)
    if extra:
        newer = any(extra[0] in keys for keys in _OPTIONAL.values())
        raise MeasurementsError(f"{FILENAME}: {where} has unknown key {_show(extra[0])} "
                                + (f"(it needs 'schema': {SCHEMA!r})" if newer
                                   else f"(expected: {', '.join(names + optional)})"))


def _runs(value, name: str, unit: str, figure: float) -> tuple:
    """A list of 1 to MAX_RUNS positive numbers whose min-max holds ``figure``."""
    if not isinstance(value, list) or not 1 <= len(value) <= MAX_RUNS:
        raise MeasurementsError(f"{FILENAME}: '{name}' must be a list of 1 to {MAX_RUNS} runs in {unit}")
    runs = tuple(_positive(v, f"{name}[{i}]", unit) for i, v in enumerate(value))
    slack = 1e-6 * figure
    if not min(runs) - slack <= figure <= max(runs) + slack:
        raise MeasurementsError(f"{FILENAME}: the figure {figure:g} {unit} is outside its runs "
                                f"'{name}' ({min(runs):g}-{max(runs):g}); quote the median or best of them")
    return runs


def _optional_int(value, name: str, unit: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
        raise MeasurementsError(f"{FILENAME}: '{name}' must be a positive whole number of {unit} or null, "
                                f"got {value!r}")
    return value


def _positive(value, name: str, unit: str) -> float:
    """``value`` as a positive finite float; MeasurementsError otherwise (an integer too large for
    a float, such as 400 digits, included)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        number = None
    else:
        try:
            number = float(value)
        except OverflowError:
            number = None
    if number is None or not math.isfinite(number) or number <= 0:
        raise MeasurementsError(f"{FILENAME}: '{name}' must be a positive number in {unit}, got {_show(value)}")
    return number


def _show(value) -> str:
    """``value`` for a one-line message: its repr, at most about 60 characters of it."""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10**40:
        return f"an integer of {len(str(abs(value)))} digits"
    if isinstance(value, (dict, list)):
        return f"a JSON {'object' if isinstance(value, dict) else 'array'}"
    return _clip(repr(value))


def _clip(text: str) -> str:
    return text if len(text) <= 60 else text[:45] + "..." + text[-12:]

"""Task 5: the Measure table (measurements.json) is consistent with itself and with physics.

These checks read a data file, not student code: the grader parses it itself (JSON only, size
capped, see autograder/lessons/why17/measurements.py). Each check is one law of the lesson's Measure section:

- every ceiling is the student's OWN measured bandwidth divided by the model's bytes per token;
- % of ceiling = measured / ceiling;
- no measurement beats its ceiling by more than about 5% ("when a measurement exceeds a ceiling,
  the ceiling is wrong; go find the factor of two");
- the measured bandwidth is neither above about 1.1x the device's spec nor implausibly far below it;
- the ridge point is peak / bandwidth.

A missing or malformed file fails every task5 check with the same one-line reason, and nothing else.
A file from the simulated GPU (shared/simulated_run.py) is present and follows the schema, but its
numbers are the simulator's, not the student's machine's: every check that judges the measurements
fails with one line saying so (the Measure table grades a run on the student's own CPU or GPU).
"""
from __future__ import annotations

from autograder.api import CheckFailed, check
from autograder.lessons.why17 import measurements
from shared import settings

TASK = "task5"
#: Relative tolerance of the arithmetic the notebook does (rounding to a few digits is fine).
REL_TOL = 0.01
#: A measurement may beat its ceiling by this factor before it is flagged: the lesson's "about 5%"
#: of timing noise; a factor of two (bytes counted once) is far outside it.
CEILING_SLACK = 1.05
#: Below this fraction of the spec a copy benchmark is not believable: the lowest legitimate path in
#: the tables (the driver copy, 0.46 of spec) halved by counting bytes once is still 0.23; ten times
#: below spec takes a unit slip (TB/s, 1e6) or timing the allocation.
FLOOR_FRACTION_OF_SPEC = 0.1
#: Model parameter counts may differ from the tables by this much (embedding in or out is exact).
PARAMS_TOL = 0.02

MEASURE = "Reread: Measure."


def _table(ctx) -> measurements.Measurements:
    """The submission's measurements.json, parsed; CheckFailed with one line when it cannot be."""
    data = ctx.read_file(measurements.FILENAME, measurements.MAX_BYTES + 1)
    if data is None:
        raise CheckFailed(f"{measurements.FILENAME} is missing: run the lab notebook why17.ipynb to the end, "
                          f"it writes the Measure table there, and hand the file in. {MEASURE}")
    try:
        return measurements.parse(data)
    except measurements.MeasurementsError as exc:
        raise CheckFailed(f"{exc}. {MEASURE}") from None


def _measured(ctx) -> measurements.Measurements:
    """The submission's Measure table when it holds a run on a real machine; CheckFailed (one
    line) when it is missing, malformed, or from the simulated GPU."""
    table = _table(ctx)
    if table.simulated:
        raise CheckFailed(
            f"{measurements.FILENAME} comes from the simulated GPU: {table.simulated_why}. Its numbers are the "
            f"simulator's, not your machine's; run the notebook on your own CPU or GPU ({settings.RUN_ON.name} unset, "
            f"auto, cpu or cuda) and hand in that file. {MEASURE}")
    return table


def _close(a: float, b: float, tol: float = REL_TOL) -> bool:
    return abs(a - b) <= tol * abs(b)


def _spec(key):
    """The shared.tables device for ``key``, or None when there is no key or no such device."""
    if key is None:
        return None
    from shared import tables

    try:
        return tables.device(key)
    except KeyError:
        return None


def own_ceiling(table: measurements.Measurements, row: measurements.Row) -> float:
    """Tokens/s ceiling from the student's own bandwidth: bw_gbs * 1e9 / (params * bytes per weight)."""
    return table.bw_gbs * 1e9 / (row.params_read * row.bytes_per_weight)


@check("measure_file", task=TASK, name="measurements.json is present and follows the schema", files=())
def measurements_file(ctx):
    table = _table(ctx)
    if table.simulated:
        return (f"{len(table.rows)} Measure table rows on {table.device_name}, a simulated run: the checks of "
                f"its numbers need a run on your own CPU or GPU")
    return f"{len(table.rows)} Measure table rows on {table.device_name}"


@check("measure_ceiling_own_bw", task=TASK, name="each ceiling = your measured bandwidth / bytes per token",
       files=())
def ceiling_from_own_bandwidth(ctx):
    from shared import tables

    table = _measured(ctx)
    spec = _spec(table.device_key)
    for row in table.rows:
        try:
            model = tables.model(row.model)
        except KeyError as exc:
            raise CheckFailed(f"Measure table row {row.model!r}: {exc.args[0]}. {MEASURE}") from None
        counts = (model.params_read(), model.params_read(whole_checkpoint=True))
        if not any(_close(row.params_read, c, PARAMS_TOL) for c in counts):
            raise CheckFailed(
                f"{row.model}: params_read {row.params_read:.4g} is neither the parameters read per token "
                f"({counts[0]:.4g}) nor the whole checkpoint ({counts[1]:.4g}). Reread: The Idea, "
                f"One token, one trip through every weight.")
        want = own_ceiling(table, row)
        if _close(row.ceiling_tok_s, want):
            continue
        used_gbs = row.ceiling_tok_s * row.params_read * row.bytes_per_weight / 1e9
        if spec is not None and _close(used_gbs, spec.bw_gbs):
            raise CheckFailed(
                f"{row.model}: your ceiling {row.ceiling_tok_s:.4g} tokens/s uses the spec sheet's "
                f"{spec.bw_gbs:g} GB/s, not the {table.bw_gbs:.4g} GB/s you measured; the ceiling "
                f"comes from your own bandwidth. {MEASURE}")
        raise CheckFailed(
            f"{row.model}: ceiling_tok_s is {row.ceiling_tok_s / want:.2f}x your bandwidth "
            f"({table.bw_gbs:.4g} GB/s) divided by the bytes read per token; ceiling = bw_gbs * 1e9 / "
            f"(params_read * bytes_per_weight). {MEASURE}")
    return f"{len(table.rows)} ceilings follow from {table.bw_gbs:.4g} GB/s"


@check("measure_pct_of_ceiling", task=TASK, name="% of ceiling = measured / ceiling", files=())
def pct_of_ceiling(ctx):
    table = _measured(ctx)
    for row in table.rows:
        want = 100.0 * row.measured_tok_s / row.ceiling_tok_s
        if _close(row.pct_of_ceiling, want):
            continue
        if _close(row.pct_of_ceiling, 100.0 * row.ceiling_tok_s / row.measured_tok_s):
            cause = "it is inverted: % of ceiling is measured / ceiling, not ceiling / measured"
        elif _close(row.pct_of_ceiling, want / 100.0):
            cause = "it is a fraction, not a percent: multiply measured / ceiling by 100"
        else:
            cause = "% of ceiling is 100 * measured_tok_s / ceiling_tok_s"
        raise CheckFailed(f"{row.model}: pct_of_ceiling {row.pct_of_ceiling:.4g} is "
                          f"{row.pct_of_ceiling / want:.2f}x what your own numbers give; {cause}. {MEASURE}")
    return "every % of ceiling = measured / ceiling"


@check("measure_not_above_ceiling", task=TASK, name="no measurement exceeds its ceiling", files=())
def not_above_ceiling(ctx):
    table = _measured(ctx)
    for row in table.rows:
        ceiling = own_ceiling(table, row)
        ratio = row.measured_tok_s / ceiling
        if ratio > CEILING_SLACK:
            raise CheckFailed(
                f"{row.model}: measured {row.measured_tok_s:.4g} tokens/s is {ratio:.2f}x its ceiling of "
                f"{ceiling:.4g} tokens/s from your bandwidth. When a measurement exceeds a ceiling, the "
                f"ceiling is wrong; go find the factor of two (a copy reads and writes its bytes). "
                f"Reread: Break It, Count bytes once.")
    worst = max(r.measured_tok_s / own_ceiling(table, r) for r in table.rows)
    return f"highest measurement is {100 * worst:.0f}% of its ceiling"


@check("measure_bw_plausible", task=TASK, name="measured bandwidth is plausible for the device", files=())
def bandwidth_plausible(ctx):
    from shared import tables

    table = _measured(ctx)
    spec = _spec(table.device_key)
    if table.device_key is not None and spec is None:
        raise CheckFailed(f"device.key {table.device_key!r} is not in the hardware tables; use one of "
                          f"{', '.join(sorted(tables.devices()))}, or null for a machine not listed. {MEASURE}")
    if spec is None:
        return (f"not checked here: {table.device_name} has no spec sheet in the tables, so {table.bw_gbs:.4g} "
                f"GB/s is compared with nothing (this check judges a device of shared/data/hardware.yml)")
    ratio = table.bw_gbs / spec.bw_gbs
    never_above = tables.fractions()["never_above_spec"].high
    if ratio > never_above:
        raise CheckFailed(
            f"bw_gbs {table.bw_gbs:.4g} GB/s is {ratio:.2f}x the {spec.name} spec of {spec.bw_gbs:g} GB/s; "
            f"anything above about {never_above:g}x spec is never legitimate: a buffer that fits in the cache, "
            f"or a clock stopped before the device finished. Reread: Break It, Tiny buffers; Forget to "
            f"synchronize.")
    if ratio < FLOOR_FRACTION_OF_SPEC:
        raise CheckFailed(
            f"bw_gbs {table.bw_gbs:.4g} GB/s is {ratio:.3f}x the {spec.name} spec of {spec.bw_gbs:g} GB/s, "
            f"implausibly far below it: check the units (GB/s = 1e9 bytes/s) and that only the copies are "
            f"timed. Reread: Build It.")
    return f"{table.bw_gbs:.4g} GB/s is {100 * ratio:.0f}% of the {spec.name} spec"


@check("measure_ridge_point", task=TASK, name="ridge point = peak / bandwidth", files=())
def ridge_point(ctx):
    table = _measured(ctx)
    want = table.peak_tflops * 1e12 / (table.bw_gbs * 1e9)
    if not _close(table.ridge_flops_per_byte, want):
        raise CheckFailed(
            f"ridge_flops_per_byte {table.ridge_flops_per_byte:.4g} is {table.ridge_flops_per_byte / want:.2f}x "
            f"your peak_tflops * 1e12 / (bw_gbs * 1e9); the ridge point is peak FLOP/s over bandwidth in "
            f"bytes/s, in FLOPs per byte. Reread: Arithmetic intensity: work per byte.")
    return f"ridge point {want:.4g} FLOPs/byte"

"""The lab notebook runs headless (nbclient) on the CPU, draws its plots and writes a measurements.json
that the task5 checks accept; the student's copy stops at the stubs with the task's name."""
from __future__ import annotations

import json
import os
import re
import shutil
import time
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from autograder.core import course
from autograder.grading.grade import grade_submission
from shared import settings
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: every test executes the lab notebook, or part of it.
pytestmark = pytest.mark.slow

if TYPE_CHECKING:
    import nbformat

# nbformat and nbclient are imported where a test runs a notebook, not at collection: nbformat's
# schema validator (jsonschema) takes about 4 s to import, and every pytest-xdist worker collects
# this module while only one runs it.

TASK5 = {"measure_file", "measure_ceiling_own_bw", "measure_pct_of_ceiling", "measure_not_above_ceiling",
         "measure_bw_plausible", "measure_ridge_point"}
#: Seconds one cell may run before nbclient gives up (a safety net, not a performance assertion).
CELL_TIMEOUT_S = 600


def run_notebook(folder: Path, allow_errors: bool = False, **env: str) -> nbformat.NotebookNode:
    """Execute folder/why17.ipynb in place, as a student would with Run All (on the CPU unless
    ``env`` says otherwise, e.g. {settings.RUN_ON.name: 'sim'})."""
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.read(folder / "why17.ipynb", as_version=4)
    env = {settings.RUN_ON.name: "cpu", **env}
    before = {name: os.environ.get(name) for name in env}
    os.environ.update(env)                      # the kernel inherits it
    try:
        NotebookClient(nb, timeout=CELL_TIMEOUT_S, kernel_name="python3", allow_errors=allow_errors,
                       resources={"metadata": {"path": str(folder)}}).execute()
    finally:
        for name, value in before.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    return nb


def student_folder(base: Path, notebook_from: Path, modules_from: Path) -> Path:
    """base/why17 with the notebook and the .py modules, and base/shared beside it as in the bundle."""
    folder = base / "why17"
    folder.mkdir(parents=True)
    shutil.copy(notebook_from / "why17.ipynb", folder)
    for path in modules_from.glob("*.py"):
        shutil.copy(path, folder)
    (base / "shared").symlink_to(ROOT / "shared")
    return folder


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    folder = student_folder(tmp_path_factory.mktemp("nb"), ROOT / "solutions" / "why17",
                            ROOT / "solutions" / "why17")
    started = time.monotonic()
    nb = run_notebook(folder)
    print(f"\nreference notebook ran on the CPU in {time.monotonic() - started:.1f} s")
    return folder, nb


def outputs(nb, kind):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.outputs if o.output_type == kind]


def test_reference_notebook_runs_without_errors_and_draws_its_plots(executed):
    _folder, nb = executed
    assert outputs(nb, "error") == []
    pngs = [o for o in outputs(nb, "display_data") if "image/png" in o.data]
    assert len(pngs) == 3          # the cache cliff, the roofline, the batch curve
    text = "".join(o.text for o in outputs(nb, "stream") if o.name == "stdout")
    for words in ("measured main-memory bandwidth", "ridge point", "MiB buffer (in the cache)", "no synchronize",
                  "bytes counted once", "of the half-size ceiling", "n^3 FLOPs", "read as GB/s", "KV cache",
                  "wrote measurements.json"):
        assert words in text
    assert "never called torch.cuda.synchronize" not in text     # on a CPU there is nothing to remove


def test_reference_notebook_captions_come_from_its_own_numbers_and_quote_each_figure_once(executed):
    from shared import spread, sweep_reading

    folder, nb = executed
    table = json.loads((folder / "measurements.json").read_text())
    text = "".join(o.text for o in outputs(nb, "stream") if o.name == "stdout")
    flat = " ".join(text.split())
    reading = sweep_reading.read(table["sweep_gbs_by_mib"], llc_bytes=table["device"]["llc_bytes"],
                                 device_type="cpu", threads=table["device"]["threads"],
                                 runs=table["sweep_runs_gbs_by_mib"])
    assert reading.caption in flat                      # the caption printed is the one its numbers give
    if reading.shape != "cliff":
        assert not re.search(r"fits in the cache\s*$", text, re.M)     # no row claims the cache's speed
    row = table["rows"][-1]
    short = spread.of(row["measured_tok_s_runs"])
    # the cache-heavy experiment quotes the Measure table's runs, not a new measurement
    assert f"measured: {short.text(1, 'tok/s')} at short context" in text
    # a CPU's ridge (fp32) is a few FLOPs per byte, not the lesson's hundreds: the notebook says why, from it
    ridge = table["ridge_flops_per_byte"]
    assert f"ridge point: {ridge:.1f} FLOPs/byte; decode at batch 1 does about 0.5 FLOPs/byte" in text
    if ridge < 100:
        assert "far below the hundreds the lesson quotes for a datacenter GPU" in flat
        assert f"at a batch of about {max(1, round(ridge / 0.5)):,} streams" in flat
    # on a CPU synchronize waits for nothing: the two copies are the same work, and the caption says so
    assert "synchronize has nothing to wait for" in flat and "MiB, no synchronize" in text
    assert not re.search(r"no synchronize:.*\(wrong\)", text)


def test_reference_notebook_writes_a_table_the_grader_accepts(executed):
    import statistics

    folder, _nb = executed
    table = json.loads((folder / "measurements.json").read_text())
    assert table["device"]["type"] == "cpu" and table["rows"] and table["device"]["simulated"] is False
    assert table["schema"] == "why17-measurements/2" and table["device"]["llc_bytes"] > 0
    assert table["bw_gbs"] == max(table["bw_runs_gbs"]) and len(table["bw_runs_gbs"]) == 3
    assert table["peak_tflops"] == max(table["peak_runs_tflops"]) and len(table["peak_runs_tflops"]) == 3
    for size, gbs in table["sweep_gbs_by_mib"].items():
        assert gbs == statistics.median(table["sweep_runs_gbs_by_mib"][size])
    for row in table["rows"]:
        assert len(row["measured_tok_s_runs"]) == 3
        assert row["measured_tok_s"] == statistics.median(row["measured_tok_s_runs"])
    res = grade_submission(folder, only=TASK5)
    verdicts = {t["check"]: (t["status"], t["output"]) for t in res["tests"]}
    assert set(verdicts) == TASK5
    assert all(status == "passed" for status, _ in verdicts.values()), verdicts


def test_notebook_points_at_its_release():
    """The release notebook is the generated one: stubs where the solutions were, no outputs."""
    import nbformat

    asg = course.load().assignment("why17")
    nb = nbformat.reads((asg.assignments_dir / "why17.ipynb").read_text(), as_version=4)
    sources = [c.source for c in nb.cells]
    assert any("raise NotImplementedError('task5: Measure table')" in s for s in sources)
    assert sum("YOUR ANSWER HERE" in s for s in sources) == 5
    assert not any("### BEGIN SOLUTION" in s for s in sources)
    assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")


def test_student_notebook_stops_at_the_stubs_naming_the_task(tmp_path):
    asg = course.load().assignment("why17")
    folder = student_folder(tmp_path, asg.assignments_dir, asg.assignments_dir)
    nb = run_notebook(folder, allow_errors=True)
    errors = [f"{o.ename}: {o.evalue}" for o in outputs(nb, "error")]
    assert "NotImplementedError: task1.2: bandwidth_sweep" in errors
    assert not (folder / "measurements.json").exists() or not json.loads(
        (folder / "measurements.json").read_text()).get("rows")


def test_notebook_on_the_simulated_gpu_shows_the_mistakes_and_marks_its_table_simulated(tmp_path):
    """The notebook on `sim`: an H100 profile, and forgetting to synchronize shows as an impossible
    number (on a CPU the two agree). Its Measure table says it is simulated, so task5 reads it but
    judges none of its numbers: it grades a run on the student's own machine."""
    folder = student_folder(tmp_path, ROOT / "solutions" / "why17", ROOT / "solutions" / "why17")
    nb = run_notebook(folder, **{settings.RUN_ON.name: "sim", settings.SIM_PROFILE.name: "h100-sxm",
                                 settings.MEASURE_MODELS.name: "llama-3.2-1b"})
    assert outputs(nb, "error") == []
    table = json.loads((folder / "measurements.json").read_text())
    assert table["device"]["key"] == "h100-sxm" and [r["model"] for r in table["rows"]] == ["llama-3.2-1b"]
    text = "".join(o.text for o in outputs(nb, "stream") if o.name == "stdout")
    unsynced = float(re.search(r"no synchronize:\s+([\d.]+) GB/s", text).group(1))
    synced = float(re.search(r"synchronized:\s+([\d.]+) GB/s", text).group(1))
    assert unsynced > 10 * synced
    assert "never called torch.cuda.synchronize" not in text     # the reference's own wait was removed
    once = float(re.search(r"bytes counted once:\s+([\d.]+) GB/s", text).group(1))
    assert once == pytest.approx(synced / 2, rel=1e-3)
    assert table["device"]["simulated"] is True
    res = grade_submission(folder, only=TASK5)
    verdicts = {t["check"]: t for t in res["tests"]}
    assert verdicts.pop("measure_file")["status"] == "passed"
    assert verdicts and all(t["status"] == "failed" and "simulated GPU" in t["output"] for t in verdicts.values())


# --- Break It breaks the student's own functions, and gives no benchmark away ---------------------------

def _break_it_cells(notebook: Path) -> list[str]:
    """The code cells of the Break It section (between its heading and the next section)."""
    import nbformat

    cells = nbformat.read(notebook, as_version=4).cells
    start = next(i for i, c in enumerate(cells) if c.source.startswith("## 6. Break It"))
    end = next(i for i, c in enumerate(cells) if i > start and c.source.startswith("## "))
    return [c.source for c in cells[start:end] if c.cell_type == "code"]


def test_break_it_times_nothing_itself_and_runs_the_students_copy_bandwidth():
    asg = course.load().assignment("why17")
    code = "\n".join(_break_it_cells(asg.assignments_dir / "why17.ipynb"))
    for benchmark_part in ("perf_counter", "time.time", ".copy_(", "Event(", "torch.empty", "torch.matmul", " @ "):
        assert benchmark_part not in code, f"Break It holds {benchmark_part!r}: a benchmark of its own"
    assert re.search(r"with synchronize_removed\(\).*\n(.*\n)*?.*bw\.copy_bandwidth\(", code)
    assert "bw.copy_bandwidth(TINY_BYTES" in code and "once = synced / 2" in code


def _synchronize_removed():
    """The notebook's synchronize_removed, compiled on its own, with the names its cell relies on."""
    import ast
    import contextlib

    import torch

    from shared import devices
    source = next(s for s in _break_it_cells(ROOT / "solutions" / "why17" / "why17.ipynb")
                  if "def synchronize_removed" in s)
    node = next(n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "synchronize_removed")
    namespace = {"contextlib": contextlib, "torch": torch, "devices": devices, "DEVICE": torch.device("cpu")}
    exec(compile(ast.Module(body=[node], type_ignores=[]), "why17.ipynb", "exec"), namespace)
    return namespace["synchronize_removed"], torch


def test_synchronize_removed_swallows_both_synchronizes_and_puts_them_back():
    synchronize_removed, torch = _synchronize_removed()
    originals = (torch.cuda.synchronize, torch.accelerator.synchronize)
    with synchronize_removed() as swallowed:
        assert (torch.cuda.synchronize, torch.accelerator.synchronize) != originals
        torch.cuda.synchronize()                 # on a machine without CUDA the real one would raise
        torch.accelerator.synchronize("cuda")
        from shared import devices
        devices.synchronize(torch.device("cuda"))
    assert len(swallowed) == 3
    assert (torch.cuda.synchronize, torch.accelerator.synchronize) == originals


def test_synchronize_removed_puts_them_back_when_the_students_code_raises():
    synchronize_removed, torch = _synchronize_removed()
    originals = (torch.cuda.synchronize, torch.accelerator.synchronize)
    with pytest.raises(ZeroDivisionError):
        with synchronize_removed():
            raise ZeroDivisionError
    assert (torch.cuda.synchronize, torch.accelerator.synchronize) == originals

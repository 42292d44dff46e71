"""A cold grading runs the checks of files that import only the standard library (and, for a plot
file, matplotlib, which its child preloads) while the fork server still imports torch: which files
qualify (read from the source), a child that starts without the server, and the order the checks
run in (results keep course.yml's order)."""
from __future__ import annotations

import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from autograder.core import course
from autograder.core.registry import CPU, SIMULATED_GPU
from autograder.grading.grade import checks_for
from autograder.grading.schedule import run_order
from autograder.lessons.why17 import LESSON
from autograder.lessons.why17.fixtures import build
from autograder.sandbox import forkserver, imports
from autograder.sandbox.forkserver import client
from autograder.sandbox.parent import Limits, Sandbox
from autograder.sandbox.perfile import LIGHT, LIGHT_LOADS


def _folder(tmp_path, **files):
    for name, text in files.items():
        (tmp_path / f"{name}.py").write_text(text)
    return tmp_path


@pytest.mark.parametrize("source", [
    "import math\nx = math.sqrt(2)\n",
    "from collections import OrderedDict\nimport os.path, json\n",
    "def f():\n    import statistics\n    return statistics.mean([1, 2])\n",
    "",
])
def test_a_file_of_standard_library_imports_needs_no_server(tmp_path, source):
    assert imports.imports_only(_folder(tmp_path, m=source), "m")


@pytest.mark.parametrize("source", [
    "import numpy as np\n",
    "from torch import nn\n",
    "def f():\n    import torch\n",
    "import importlib\ntorch = importlib.import_module('torch')\n",
    "torch = __import__('torch')\n",
    "exec('import torch')\n",
    "from . import helper\n",
    "def broken(:\n",
])
def test_a_file_that_may_import_more_waits_for_the_server(tmp_path, source):
    assert not imports.imports_only(_folder(tmp_path, m=source), "m")


def test_the_files_it_imports_from_the_submission_count_too(tmp_path):
    folder = _folder(tmp_path, m="import helper\n", helper="import other\n", other="import m\nimport math\n")
    assert imports.imports_only(folder, "m")           # a cycle of local files, all standard library
    (tmp_path / "other.py").write_text("import matplotlib\n")
    assert not imports.imports_only(folder, "m")
    assert not imports.imports_only(tmp_path, "absent")


@pytest.mark.parametrize("source, early", [
    ("import matplotlib\nmatplotlib.use('Agg')\nfrom matplotlib.figure import Figure\n", True),
    ("import numpy as np\nimport matplotlib.pyplot as plt\nimport math\n", True),
    ("import matplotlib\nimport torch\n", False),
    ("from matplotlib.figure import Figure\nimport pandas\n", False),
    ("import matplotlib\nplt = __import__('matplotlib.pyplot')\n", False),
])
def test_a_plot_file_may_also_import_what_its_child_preloads(tmp_path, source, early):
    folder = _folder(tmp_path, m=source)
    assert imports.imports_only(folder, "m", LIGHT_LOADS) is early
    assert not imports.imports_only(folder, "m")          # a bare child preloads nothing
    assert imports.imports_only(build.REFERENCE, "roofline", LIGHT_LOADS)


@pytest.mark.slow
def test_what_a_plot_child_preloads_brings_every_package_a_plot_file_may_import():
    code = (f"import importlib, sys\nfor m in {list(LIGHT['preload'])!r}:\n    importlib.import_module(m)\n"
            f"print(sorted(set({sorted(LIGHT_LOADS)!r}) - set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.stdout.strip() == "[]", done.stderr[-2000:]


def test_the_reference_predict_qualifies_and_a_numpy_style_does_not(tmp_path):
    assert imports.imports_only(build.REFERENCE, "predict")
    numpy_style = build.overlay("good", "numpy_predict", tmp_path / "src")
    assert not imports.imports_only(numpy_style, "predict")
    assert not imports.imports_only(build.REFERENCE, "bw")       # torch


def test_an_early_child_starts_while_the_server_is_still_importing(tmp_path, monkeypatch):
    """A server whose preload never finishes: an early child answers anyway (a fresh interpreter);
    the server is still not ready afterwards, so nothing waited for it."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "never_done.py").write_text("import time\ntime.sleep(600)\n")
    env = {**os.environ, "PYTHONPATH": str(lib)}
    server = forkserver.ForkServer(preload=("never_done",), env=env, wait=False)
    monkeypatch.setattr(client, "_active", server)
    (tmp_path / "sub").mkdir()
    sub = _folder(tmp_path / "sub", m="def f(x):\n    return 2 * x\n")
    box = Sandbox(sub, Limits(time_limit_s=30.0), preload=(), simgpu=False, early=True)
    try:
        assert box.call("m", "f", (21,))[0] == 42
        assert not server.is_ready()
    finally:
        box.close()
        server.close()


def _check(id, files, device=CPU):
    return SimpleNamespace(id=id, files=files, device=device)


def test_checks_of_bare_files_run_first_and_dependents_after_what_they_need():
    t = [SimpleNamespace(id=f"task{i}") for i in range(1, 5)]
    plan = [(t[0], [_check("gpu", ("bw",), SIMULATED_GPU)]),
            (t[1], [_check("calc", ("calc",))]),
            (t[2], [_check("uses_bw", ("report",))]),      # report.py needs bw.py: stays in place
            (t[3], [_check("plot", ("plot",)), _check("calc2", ("calc",))])]
    order, moved = run_order(plan, {"bw", "plot"}, {"report": ("bw",)})
    assert [task.id for task, _ in order] == ["task2", "task1", "task3", "task4"] and moved == {"task2"}
    # a bare file whose needed file is also graded in a task that does not move stays in place
    order, moved = run_order(plan[:2] + [(t[2], [_check("r", ("report",))])] + plan[3:], {"bw", "plot"},
                             {"report": ("calc",)})
    assert moved == {"task2"}


def test_the_why17_checks_of_predict_the_roofline_and_the_measure_table_run_first():
    asg = course.load().assignment("why17")
    plan = checks_for(asg)
    order, moved = run_order(plan, set(LESSON.torch_files), dict(LESSON.depends))
    assert [task.id for task, _ in order] == ["task3", "task4", "task5", "task1", "task2"]
    assert moved == {"task3", "task4", "task5"} and "roofline" in LESSON.plot_files


@pytest.mark.slow
def test_a_plot_child_starts_while_the_server_is_still_importing(tmp_path, monkeypatch):
    """As a bare early child: a fresh interpreter that imports matplotlib itself, while the
    server has not finished its own preload."""
    lib = tmp_path / "lib"
    lib.mkdir()
    (lib / "never_done.py").write_text("import time\ntime.sleep(600)\n")
    server = forkserver.ForkServer(preload=("never_done",), env={**os.environ, "PYTHONPATH": str(lib)}, wait=False)
    monkeypatch.setattr(client, "_active", server)
    (tmp_path / "sub").mkdir()
    sub = _folder(tmp_path / "sub", m="import sys\nfrom matplotlib.figure import Figure\n"
                                      "def f():\n    return type(Figure()).__name__\n")
    box = Sandbox(sub, Limits(time_limit_s=60.0), **LIGHT, early=True)
    try:
        assert box.call("m", "f")[0] == "Figure"
        assert not server.is_ready() and not isinstance(box.child.proc, forkserver.ForkedProcess)
    finally:
        box.close()
        server.close()

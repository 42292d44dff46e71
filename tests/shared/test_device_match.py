"""One GPU-name matcher (shared.tables.device_for_gpu_name) for the notebook and the calibration.

The names are those torch.cuda.get_device_name reports on real machines; only rows of
shared/data/hardware.yml can match, and a name of a part the table lacks matches nothing.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from shared import tables
from tests.helpers.paths import ROOT


@pytest.mark.parametrize("name, key", [
    ("NVIDIA H100 80GB HBM3", "h100-sxm"),      # the SXM part reports its memory, not "SXM"
    ("NVIDIA H100 PCIe", "h100-pcie"),
    ("NVIDIA H200", "h200"),
    ("NVIDIA A100-SXM4-80GB", "a100-80gb"),
    ("NVIDIA A100-SXM4-40GB", "a100-40gb"),
    ("NVIDIA GeForce RTX 4090", "rtx-4090"),
    ("NVIDIA GeForce RTX 3090", "rtx-3090"),
    ("Tesla T4", "t4"),
    ("NVIDIA L4", "l4"),
    ("NVIDIA GB10", "dgx-spark"),
    ("NVIDIA L40S", None),                      # not an L4: model words match whole
    ("NVIDIA GH200 480GB", None),               # not an H200
    ("AMD Instinct MI300X", None),
    ("", None),
])
def test_torch_names_match_their_row(name, key):
    found = tables.device_for_gpu_name(name)
    assert (found.key if found else None) == key


@pytest.mark.parametrize("key", sorted(tables.devices()))
def test_each_row_is_found_by_its_own_name_and_the_simulators(key):
    dev = tables.device(key)
    assert tables.device_for_gpu_name(dev.name).key == key
    assert tables.device_for_gpu_name(f"{dev.name} (simulated)").key == key   # shared.simgpu's name


def test_calibration_matches_through_the_shared_matcher():
    from autograder.lessons.why17 import calibrate

    assert calibrate.match_device("NVIDIA H100 PCIe").key == "h100-pcie"
    assert calibrate.match_device("NVIDIA L40S") is None
    assert "device_for_gpu_name" in Path(calibrate.__file__).read_text(encoding="utf-8")


@pytest.mark.parametrize("tree", ["solutions", "assignments"])
def test_the_notebook_uses_the_shared_matcher(tree):
    nb = json.loads((ROOT / tree / "why17" / "why17.ipynb").read_text(encoding="utf-8"))
    code = "\n".join("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == "code")
    assert "tables.device_for_gpu_name(DEVICE_NAME)" in code
    assert "def guess_device_key" not in code and "aliases" not in code   # no matcher of its own

"""Where the driver's libraries are built (autograder/sandbox/driverlibs.py): in the user's cache,
once per card, never in the folder the grader happens to run in."""
from __future__ import annotations

import os

from autograder.sandbox import driverlibs


def test_a_user_without_an_absolute_home_gets_no_libraries_and_no_folder_in_the_working_folder(
        monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", "relative")
    driverlibs.build.cache_clear()
    try:
        assert driverlibs.build("h100-sxm") is None
    finally:
        driverlibs.build.cache_clear()
    assert os.listdir(tmp_path) == []


def test_each_card_gets_its_own_sources_naming_it():
    h100, t4 = driverlibs.sources("h100-sxm"), driverlibs.sources("t4")
    assert '"NVIDIA H100 80GB HBM3"' in h100["libcuda.so.1"] and '"Tesla T4"' in t4["libnvidia-ml.so.1"]
    assert h100 != t4

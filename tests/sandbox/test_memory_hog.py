"""A call that fills its child's memory is charged once (autograder/sandbox/parent.py
``_charge_memory``): it fails with one line, and its function is not called again in any child of
the file, so the seconds that filling gigabytes costs the machine are paid once, not per child."""
from __future__ import annotations

import shutil

import pytest

from autograder.core.errors import StudentCrashed
from autograder.sandbox import cgroup
from autograder.sandbox.parent import Limits, Sandbox, poison_key
from tests.helpers.paths import ROOT

HOG = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "attacks" / "memory_hog" / "bw.py"
GROUP = cgroup.available()


@pytest.mark.skipif(isinstance(GROUP, str), reason=f"no memory cgroup here: {GROUP}")
def test_a_memory_hog_is_failed_once_and_its_neighbours_still_answer(tmp_path):
    shutil.copyfile(HOG, tmp_path / "bw.py")
    poisoned: dict = {}
    with Sandbox(tmp_path, Limits(time_limit_s=120), preload=(), simgpu=False, poisoned=poisoned) as sb:
        with pytest.raises(StudentCrashed) as info:
            sb.call("bw", "copy_bandwidth", (2**20,))
        message = str(info.value)
        assert "of the 4096 MiB of memory it is given; it is not called again" in message and "\n" not in message
        assert sb.child is None                                    # its memory given back at once
        with pytest.raises(StudentCrashed) as again:
            sb.call("bw", "copy_bandwidth", (2**20,))
        assert again.value is info.value and sb.child is None    # not called: no child was started
        assert sb.call("bw", "measured_bandwidth")[0] == 25.0
    # every child of the file shares ``poisoned``: on the simulated GPU it is not called either
    assert poisoned[poison_key("bw", "copy_bandwidth", {})] is info.value

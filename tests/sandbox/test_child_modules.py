"""Every module in a sandboxed child's ``sys.modules`` can be inspected, as in any Python process.

The child imports the grader's runtime (``autograder.runtime``); if ``autograder`` itself were a
namespace package there (its ``__init__.py`` hidden), its ``__file__`` would be None and
``inspect.getmodule``, which scans ``sys.modules`` (torch.library does, and so
torch.utils.flop_counter.FlopCounterMode), would raise for every student program.
"""
from __future__ import annotations

import pytest

from autograder.sandbox.parent import Limits, Sandbox

MODULE = ("import inspect, sys\n\n"
          "def where():\n"
          "    line = inspect.getframeinfo(sys._getframe(0)).lineno   # scans sys.modules\n"
          "    blank = sorted(n for n, m in list(sys.modules.items())\n"
          "                   if hasattr(m, '__path__') and getattr(m, '__file__', '') is None)\n"
          "    return line, blank\n")


@pytest.mark.parametrize("preload", [(), ("torch",)], ids=["fresh interpreter", "with torch"])
def test_a_child_can_inspect_its_own_frames(tmp_path, preload):
    (tmp_path / "m.py").write_text(MODULE)
    with Sandbox(tmp_path, Limits(time_limit_s=60), preload=preload, simgpu=False) as box:
        (line, blank), _ = box.call("m", "where")
    assert line == 4 and "autograder" not in blank

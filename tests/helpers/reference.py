"""The reference solution's modules imported in the test process, as a student module would be."""
from __future__ import annotations

import importlib.util

from tests.helpers.paths import ROOT


def load(name: str):
    """solutions/why17/<name>.py under a private module name (imported after simgpu.install, like a
    student module; never as plain 'bw', which other tests may import from elsewhere)."""
    spec = importlib.util.spec_from_file_location(f"why17_reference_{name}",
                                                  ROOT / "solutions" / "why17" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

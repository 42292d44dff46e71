"""A jailed child on a machine without a GPU sees the files a GPU machine shows
(autograder/sandbox/rootfs.py, ``present_gpu``): a program cannot tell the simulated GPU by
their absence. Real processes through the jail, as tests/sandbox/test_security_jail.py runs them."""
from __future__ import annotations

import os

import pytest

from autograder.sandbox import rootfs
from tests.helpers.jailed import needs_namespaces, seen

no_gpu = pytest.mark.skipif(os.path.exists("/dev/nvidia0"),
                            reason="a real GPU's nodes are bound as they are; nothing is presented")


@needs_namespaces
@no_gpu
def test_a_jailed_child_sees_the_driver_version_and_the_device_nodes_read_only():
    info = seen("""
        import json, os
        path = "/proc/driver/nvidia/version"
        try:
            open(path + ".new", "w")
            wrote = True
        except OSError:
            wrote = False
        nodes = sorted(n for n in os.listdir("/dev") if n.startswith("nvidia"))
        read = open("/dev/nvidia0", "rb").read().decode()
        print(json.dumps({"version": open(path).read(), "nodes": nodes, "read": read, "wrote": wrote}))
    """)
    assert info["version"] == rootfs.DRIVER_VERSION
    assert info["nodes"] == sorted(rootfs.GPU_NODES)
    assert info["read"] == "" and info["wrote"] is False

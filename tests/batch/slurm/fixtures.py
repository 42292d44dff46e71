"""pytest fixture ``slurm_cluster``: a single-node Slurm cluster for the tests of one session.

Import it into a test module (``from tests.batch.slurm.fixtures import slurm_cluster``). Where the
binaries are missing it installs Debian's packages when it can (root with apt-get, as on CI, where
.ci/run has already done so); it skips, saying why, only where Slurm cannot be installed. A cluster
that is installed but fails to start is an error, not a skip.
"""
from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from tests.batch.slurm.cluster import Cluster, missing_binaries

PACKAGES = ("slurmctld", "slurmd", "slurm-client", "munge")


def _install() -> str | None:
    """Install the packages with apt-get; None when done, else why it cannot be done here."""
    if shutil.which("apt-get") is None:
        return "apt-get not available"
    if os.geteuid() != 0:
        return "not root, cannot apt-get install"
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    proc = subprocess.run(["apt-get", "install", "-y", "-q", "--no-install-recommends", *PACKAGES],
                          capture_output=True, text=True, env=env, timeout=900)
    if proc.returncode != 0:
        return f"apt-get install failed: {(proc.stderr or proc.stdout).strip().splitlines()[-1:]}"
    return None


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    """A started :class:`Cluster`; SLURM_CONF points the client commands at it while it runs."""
    missing = missing_binaries()
    if missing:
        why = _install()
        if why is not None:
            pytest.skip(f"Slurm cannot be installed here ({why}); missing: {', '.join(missing)}")
    if os.geteuid() != 0:
        pytest.skip("slurmd must run as root to launch jobs, and the tests run as a non-root user")
    cluster = Cluster(tmp_path_factory.mktemp("slurm")).start()
    saved = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(cluster.conf)
    try:
        yield cluster
    finally:
        cluster.stop()
        if saved is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = saved

"""Small Python programs run through the jail exactly as the sandbox starts the runner
(autograder/sandbox/isolation.py): what they print is what a jailed child could see."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from autograder.sandbox import isolation

PROT = isolation.protection()
needs_namespaces = pytest.mark.skipif(
    PROT.mode != "namespaces", reason=f"this kernel refuses namespaces here: {PROT.reason}")


def run_jailed(code: str, *args: str, files: dict[str, str] | None = None, timeout: float = 120, limits=None):
    """Run ``python -c code args`` through the jail in a fresh private folder, with ``limits`` (a
    policy.JailLimits; None: the defaults); (rc, stdout, stderr)."""
    workdir = Path(tempfile.mkdtemp(prefix="why17-jailtest-"))
    try:
        for name, text in (files or {}).items():
            (workdir / name).write_text(text)
        argv = isolation.wrap([sys.executable, "-I", "-S", "-c", textwrap.dedent(code), *args], workdir,
                              limits=limits)
        proc = subprocess.Popen(argv, cwd=workdir, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True)
        try:
            out, err = proc.communicate(timeout=timeout)
        finally:
            if proc.poll() is None:
                os.killpg(proc.pid, 9)
                proc.wait()
            isolation.reap(proc.pid, workdir)
        return proc.returncode, out, err
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


def seen(code: str, *args: str, **kw):
    rc, out, err = run_jailed(code, *args, **kw)
    assert rc == 0, f"jailed program failed ({rc}): {err[-2000:]}"
    return json.loads(out.strip().splitlines()[-1])

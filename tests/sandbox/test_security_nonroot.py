"""The sandbox when the grader is NOT root: the jail tests and a grading run, as uid 65534.

CI runs as root, so these tests drop to an unprivileged uid in a subprocess (setpriv) and run
there what the other security tests run as root: the jail then uses a user namespace instead of
a uid of its own. Where the interpreter, its virtual environment or the checkout sits below a
folder other users cannot enter (a pyenv under /root, a clone under a private folder of mode 0700),
the subprocess first gets a private mount namespace in which only those folders are reachable
through it; nothing outside the test changes.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from autograder.core import settings
from autograder.sandbox import confine, policy

NOBODY = 65534
ROOT = policy.ROOT
_STAGES: list[str] = []

pytestmark = [
    pytest.mark.skipif(os.getuid() != 0, reason="already unprivileged: the other security tests "
                                                "run as this user; dropping to another uid needs root"),
    pytest.mark.skipif(not (shutil.which("setpriv") and shutil.which("unshare")),
                       reason="util-linux's setpriv and unshare are needed to drop to another uid"),
    pytest.mark.slow,     # each test reruns other tests or a grading as another uid (not in `make check`)
]


def _blocked_ancestor(path: Path) -> Path | None:
    """The first folder above ``path`` that other users cannot enter (no o+x), or None."""
    parts = path.resolve().parts
    for i in range(1, len(parts)):
        folder = Path(*parts[:i])
        if not os.stat(folder).st_mode & 0o001:
            return folder
    return None


def _reach_script(paths: list[Path]) -> str:
    """Shell lines (run as root in a fresh mount namespace) that make each of ``paths`` reachable
    by all: each folder other users cannot enter is replaced, in that namespace, by a folder that
    holds only the entries leading to ``paths``."""
    hidden: dict[Path, set[str]] = {}
    for path in paths:
        blocked = _blocked_ancestor(path)
        if blocked is None:
            continue
        inner = path.resolve().relative_to(blocked).parts[0]
        if _blocked_ancestor(blocked / inner / "x") not in (None, blocked):
            pytest.skip(f"{path} sits below more than one folder other users cannot enter")
        hidden.setdefault(blocked, set()).add(inner)
    script = "mount --make-rprivate / && " if hidden else ""
    for blocked, inners in hidden.items():
        stage = tempfile.mkdtemp(prefix="why17-reach-")
        _STAGES.append(stage)
        os.chmod(stage, 0o755)
        for inner in sorted(inners):
            script += (f"mkdir -p {_quote(f'{stage}/{inner}')} && "
                       f"mount --rbind {_quote(f'{blocked}/{inner}')} {_quote(f'{stage}/{inner}')} && ")
        script += f"mount --rbind {_quote(stage)} {_quote(str(blocked))} && "
    return script


def as_nobody(argv: list[str], cwd: Path, timeout: float = 600, extra_env=()) -> subprocess.CompletedProcess:
    """Run ``argv`` as uid/gid 65534 with a clean environment (plus ``extra_env``, NAME=VALUE
    strings), the interpreter made reachable."""
    home = Path(tempfile.mkdtemp(prefix="why17-nobody-"))
    os.chmod(home, 0o777)
    env = ["env", "-i", f"PATH={os.environ.get('PATH', '/usr/bin:/bin')}", f"HOME={home}",
           "LANG=C.UTF-8", "PYTHONDONTWRITEBYTECODE=1", f"TMPDIR={tempfile.gettempdir()}", *extra_env]
    drop = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", "--"]
    command = " ".join(_quote(a) for a in drop + env + argv)
    reach = _reach_script([Path(sys.base_prefix), Path(sys.prefix), ROOT, Path(cwd)])
    script = reach + f"cd {_quote(str(cwd))} && exec {command}"
    try:
        return subprocess.run(["unshare", "--mount", "sh", "-c", script], capture_output=True,
                              text=True, timeout=timeout)
    finally:
        shutil.rmtree(home, ignore_errors=True)
        for stage in _STAGES:
            shutil.rmtree(stage, ignore_errors=True)   # empty: its mounts lived in the namespace
        _STAGES.clear()


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\"'\"'") + "'"


def test_jail_tests_pass_for_an_unprivileged_grader():
    done = as_nobody([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                      "tests/sandbox/test_security_jail.py"], cwd=ROOT)
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, tail
    assert " passed" in done.stdout and " failed" not in done.stdout, tail


def test_unprivileged_grader_reports_a_user_namespace_sandbox():
    code = ("import json; from autograder.sandbox import isolation as i; p = i.protection(); "
            "print(json.dumps({'mode': p.mode, 'uid': p.child_uid, 'text': p.describe()}))")
    done = as_nobody([sys.executable, "-c", code], cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    got = json.loads(done.stdout.strip().splitlines()[-1])
    if got["mode"] != "namespaces":
        pytest.skip(f"unprivileged user namespaces are refused here: {got['text']}")
    assert got["uid"] == NOBODY
    assert "the grader's own (unprivileged) user" in got["text"]
    assert "unable to read the grader" in got["text"] and "with no network" in got["text"]


def test_quota_and_confinement_tests_pass_in_plain_mode_for_an_unprivileged_grader():
    """Plain mode as an unprivileged grader (namespaces refused, e.g. Docker's default seccomp
    profile): what tests/sandbox/test_security_confine.py proves there (the seccomp filter, Landlock)
    holds, and each bound that does not exist is stated with its reason."""
    done = as_nobody([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
                      "tests/sandbox/test_security_confine.py"], cwd=ROOT, extra_env=[f"{settings.SANDBOX.name}=plain"])
    tail = (done.stdout + done.stderr)[-3000:]
    assert done.returncode == 0, tail
    assert " passed" in done.stdout and " failed" not in done.stdout, tail


def test_the_reference_grades_in_full_under_the_filter_and_landlock_in_plain_mode():
    """torch imports and runs under the seccomp filter and the Landlock ruleset: the reference
    earns every point of tasks 1-4 (task 5's measurements.json is the student's notebook's)."""
    out = Path(tempfile.mkdtemp(prefix="why17-nobody-out-"))
    os.chmod(out, 0o777)
    try:
        done = as_nobody([sys.executable, "-m", "autograder", "grade", "solutions/why17", "--out",
                          str(out / "results.json")], cwd=ROOT, extra_env=[f"{settings.SANDBOX.name}=plain"])
        assert done.returncode == 0, (done.stdout + done.stderr)[-3000:]
        results = json.loads((out / "results.json").read_text())
    finally:
        shutil.rmtree(out, ignore_errors=True)
    line = next(x for x in results["output"].splitlines() if x.startswith("Sandbox (plain):"))
    short = {t["check"]: (t["score"], t["max_score"]) for t in results["tests"]
             if t["task"] != "task5" and t["score"] != t["max_score"]}
    assert short == {}, line
    assert ("a seccomp filter refused" in line) == (confine.seccomp_table() is not None), line
    assert ("Landlock (ABI" in line) == (confine.landlock_abi() > 0), line

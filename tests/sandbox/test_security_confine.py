"""Quotas and defence in depth: the working folder's disk and inode quota, the memory bound of a
whole submission, the seccomp filter, and (plain mode) Landlock; real processes through the real
jail (autograder/sandbox/jail.py, confine.py, cgroup.py).

Each test runs in whatever mode this machine gives (isolation.protection()); where a bound does
not exist in that mode, the test checks that the results say so, with the reason, and skips with
it. tests/sandbox/test_security_nonroot.py runs this file again as an unprivileged user in plain mode
(the SANDBOX setting ``plain``), where Landlock stands in for the private root.
"""
from __future__ import annotations

import errno
import json
import re
import shutil
import socket
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from autograder.core.errors import StudentCrashed, StudentRaised
from autograder.sandbox import cgroup, isolation, policy
from autograder.sandbox.parent import Limits, Sandbox
from tests.helpers.paths import ROOT

ATTACKS = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "attacks"
PROT = isolation.protection()
JAIL = policy.JailLimits()
MISSING = dict(PROT.why_not)


def needs(bound: str, present: bool):
    """Skip (with the reason the results give) where ``bound`` does not hold in this mode."""
    return pytest.mark.skipif(not present, reason=f"no {bound} in {PROT.mode} mode here: {MISSING.get(bound)}")


def attack(name: str, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(ATTACKS / name / "bw.py", dest / "bw.py")
    return dest


def bare(folder: Path, **limits) -> Sandbox:
    """A child without torch or the simulated GPU (the attacks here need neither)."""
    return Sandbox(folder, Limits(time_limit_s=120, **limits), preload=(), simgpu=False)


def test_every_missing_bound_is_stated_with_its_reason():
    text = PROT.describe(JAIL)
    for bound, why in PROT.why_not:
        assert f"no {bound} ({why})" in text
    assert ("seccomp filter refused" in text) == PROT.seccomp
    assert ("MiB of memory in all (cgroup" in text) == bool(PROT.memory_cgroup)
    assert ("a working folder of" in text) == PROT.quota
    if PROT.mode == "namespaces":
        assert PROT.quota, "with namespaces the working folder is always a tmpfs of its own"


# --------------------------------------------------------------------------- disk and inodes

@needs("disk quota", PROT.quota)
def test_filling_the_disk_stops_at_the_quota_and_the_host_sees_nothing(tmp_path):
    with bare(attack("fill_disk", tmp_path / "sub")) as box:
        got, _ = box.call("bw", "fill")
        host = sorted(p.name for p in box.child.host_dir.iterdir())
        seen = sorted(p.name for p in box.child.workdir.iterdir())
    assert got["error"] == "No space left on device"
    assert 0 < got["mib"] <= JAIL.disk_bytes // 2**20
    assert got["mib"] < 1020, "the quota, not the attack's own bound, stopped it"
    assert host == ["bw.py"], "the host's folder holds none of what the child wrote"
    assert "fill_0.bin" in seen


@needs("disk quota", PROT.quota)
def test_a_full_disk_is_charged_to_the_student_with_the_quota_named(tmp_path):
    with bare(attack("fill_disk", tmp_path / "sub")) as box:
        with pytest.raises(StudentRaised) as raised:
            box.call("bw", "copy_bandwidth", (2**20,))
    message = str(raised.value)
    assert message.startswith("OSError: [Errno 28] No space left on device")
    assert f"its working folder holds at most {JAIL.disk_bytes // 2**20} MiB" in message


@needs("disk quota", PROT.quota)
def test_an_inode_flood_stops_at_the_quota(tmp_path):
    with bare(attack("inode_flood", tmp_path / "sub")) as box:
        got, _ = box.call("bw", "flood")
        host = sorted(p.name for p in box.child.host_dir.iterdir())
    assert got["error"] == "No space left on device"
    assert 0 < got["files"] < JAIL.disk_inodes
    assert host == ["bw.py"]


@needs("disk quota", PROT.quota)
def test_tmp_has_an_inode_quota_too(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "flood.py").write_text(
        "import os\n"
        "def flood(where='/tmp/flood'):\n"
        "    os.makedirs(where)\n"
        "    n = 0\n"
        "    try:\n"
        "        while n < 200_000:\n"
        "            os.close(os.open(f'{where}/{n}', os.O_CREAT | os.O_WRONLY)); n += 1\n"
        "    except OSError as exc:\n"
        "        return n, exc.errno\n"
        "    return n, 0\n")
    with bare(folder) as box:
        (made, err), _ = box.call("flood", "flood")
    assert err == errno.ENOSPC and made < JAIL.tmp_inodes


# --------------------------------------------------------------------------- memory in total

@pytest.mark.slow
@needs("total memory cap", bool(PROT.memory_cgroup))
def test_several_memory_hungry_processes_are_bounded_in_total(tmp_path):
    cap_mib = 1024
    with bare(attack("memory_children", tmp_path / "sub"), memory_limit_mb=cap_mib) as box:
        try:
            got, _ = box.call("bw", "hoard", kwargs={"children": 4, "each_mib": 640})
        except StudentCrashed as exc:   # charged as a memory hog (parent.py): the peak is in its line
            took = int(re.search(r"took (\d+) MiB", str(exc)).group(1))
            assert took <= cap_mib and "it is not called again" in str(exc), exc
            return
        peak = cgroup.peak_bytes(policy.group_name(box.child.host_dir))
    assert got["requested_mib"] > 2 * cap_mib, "the attack asks for more than the cap: it proves something"
    assert got["killed"] + got["refused"] >= 1, got
    assert got["reported_mib"] <= cap_mib, got
    assert peak is None or peak <= cap_mib * 2**20      # None: a v2 kernel before 5.19 (no memory.peak)


def test_without_a_cgroup_the_bound_that_holds_is_stated():
    if PROT.memory_cgroup:
        assert "no total memory cap" not in PROT.describe(JAIL)
        return
    why = MISSING["total memory cap"]
    assert f"no total memory cap ({why})" in PROT.describe(JAIL)


# --------------------------------------------------------------------------- seccomp

@pytest.fixture(scope="module")
def probes(tmp_path_factory) -> tuple[dict, dict]:
    """(what each probe got sandboxed, what it got in a plain interpreter of the grader's user)."""
    folder = attack("syscalls", tmp_path_factory.mktemp("syscalls"))
    with bare(folder) as box:
        jailed, _ = box.call("bw", "probe_all")
    code = f"import json, sys; sys.path.insert(0, {str(folder)!r}); import bw; print(json.dumps(bw.probe_all()))"
    done = subprocess.run([sys.executable, "-I", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return jailed, json.loads(done.stdout.strip().splitlines()[-1])


PROBES = ("udp", "udp6", "raw", "packet", "vsock", "ptrace", "keyctl", "add_key", "request_key", "bpf",
          "io_uring_setup", "io_uring_enter", "userfaultfd", "perf_event_open", "kexec_load", "mount",
          "unshare", "setns", "clone_newuser")


def test_the_probe_list_is_the_fixtures():
    import importlib.util
    spec = importlib.util.spec_from_file_location("syscalls_bw", ATTACKS / "syscalls" / "bw.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert tuple(module.PROBES) == PROBES


@needs("seccomp filter", PROT.seccomp)
@pytest.mark.parametrize("probe", PROBES)
def test_each_denied_system_call_class_is_refused_by_the_filter(probes, probe):
    jailed, unsandboxed = probes
    assert jailed[probe] == "EPERM", f"{probe} got {jailed[probe]} in the sandbox"
    if unsandboxed[probe] == "EPERM":
        pytest.skip(f"{probe}: the kernel refuses it to this user anyway (EPERM), so the filter's own "
                    "refusal cannot be told apart here")
    assert unsandboxed[probe] != "EPERM"


@needs("seccomp filter", PROT.seccomp)
def test_what_graded_code_needs_still_works_under_the_filter(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "needs.py").write_text(
        "import os, socket, subprocess, sys, threading\n"
        "def run():\n"
        "    out = {}\n"
        "    t = threading.Thread(target=lambda: out.setdefault('thread', True)); t.start(); t.join()\n"
        "    a, b = socket.socketpair(); a.sendall(b'x'); out['unix'] = b.recv(1) == b'x'\n"
        "    socket.socket(socket.AF_INET, socket.SOCK_STREAM).close(); out['tcp_socket'] = True\n"
        "    pid = os.fork()\n"
        "    if pid == 0:\n"
        "        os._exit(7)\n"
        "    out['fork'] = os.WEXITSTATUS(os.waitpid(pid, 0)[1]) == 7\n"
        "    done = subprocess.run([sys.executable, '-S', '-c', 'print(6 * 7)'], capture_output=True, text=True)\n"
        "    out['exec'] = done.stdout.strip() == '42'\n"
        "    return out\n")
    with bare(folder) as box:
        got, _ = box.call("needs", "run")
    assert got == {"thread": True, "unix": True, "tcp_socket": True, "fork": True, "exec": True}


# --------------------------------------------------------------------------- Landlock (plain mode)

needs_landlock = pytest.mark.skipif(
    PROT.mode != "plain" or not PROT.landlock,
    reason="Landlock is plain mode's: namespaces mode has the private root instead" if PROT.mode != "plain"
    else f"no Landlock in plain mode here: {MISSING.get('Landlock')}")


@needs_landlock
def test_landlock_keeps_the_grader_files_out_of_reach(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "steal.py").write_text(
        "import os\n"
        "def steal(paths):\n"
        "    out = {}\n"
        "    for p in paths:\n"
        "        try:\n"
        "            with open(p) as f:\n"
        "                out[p] = f.read(40)\n"
        "        except OSError as exc:\n"
        "            out[p] = exc.errno\n"
        "    return out\n")
    targets = [str(ROOT / "solutions" / "why17" / "predict.py"), str(ROOT / "course.yml"),
               str(ROOT / "autograder" / "grading" / "grade.py"), str(ROOT / "shared" / "__init__.py")]
    with bare(folder) as box:
        got, _ = box.call("steal", "steal", (targets,))
    assert {p: got[p] for p in targets[:3]} == {p: errno.EACCES for p in targets[:3]}
    assert isinstance(got[targets[3]], str), "shared/ (which students have) stays readable"


@needs_landlock
def test_landlock_allows_writing_only_the_working_folder(tmp_path):
    folder = tmp_path / "sub"
    folder.mkdir()
    outside = tmp_path / "outside"
    outside.mkdir(mode=0o777)
    outside.chmod(0o777)
    (folder / "write.py").write_text(
        "def write(path):\n"
        "    try:\n"
        "        with open(path, 'w') as f:\n"
        "            f.write('FORGED')\n"
        "        return 'written'\n"
        "    except OSError as exc:\n"
        "        return exc.errno\n")
    with bare(folder) as box:
        inside, _ = box.call("write", "write", ("mine.txt",))
        out, _ = box.call("write", "write", (str(outside / "results.json"),))
    assert inside == "written"
    assert out == errno.EACCES and not (outside / "results.json").exists()


@needs_landlock
def test_landlock_refuses_tcp_connections(tmp_path):
    if PROT.landlock < 4:
        pytest.skip(f"Landlock ABI {PROT.landlock} has no TCP rules (ABI 4 and later)")
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    server.settimeout(0.2)
    accepted, stop = [], threading.Event()

    def serve():
        while not stop.is_set():
            try:
                accepted.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    folder = tmp_path / "sub"
    folder.mkdir()
    (folder / "reach.py").write_text(
        "import socket\n"
        "def reach(port):\n"
        "    try:\n"
        "        socket.create_connection(('127.0.0.1', port), timeout=5).close()\n"
        "        return 'connected'\n"
        "    except OSError as exc:\n"
        "        return exc.errno\n")
    try:
        with bare(folder) as box:
            got, _ = box.call("reach", "reach", (server.getsockname()[1],))
    finally:
        stop.set()
        thread.join()
        server.close()
    assert got == errno.EACCES and accepted == []

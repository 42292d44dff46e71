"""The jail on its own (autograder/sandbox/isolation.py + sandbox_jail.py): real processes, no grader.

Each test starts a small Python program through the jail exactly as the sandbox starts the runner
and asserts what that program could see and do. The namespace tests need a kernel that allows
namespaces (root on a plain Linux machine, or unprivileged user namespaces); where it refuses,
they skip with that reason and the plain-mode tests state what the results would say instead.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from autograder.core import settings
from autograder.sandbox import cgroup, confine, isolation, policy
from tests.helpers import loopback
from tests.helpers.jailed import PROT, needs_namespaces, run_jailed, seen
from tests.helpers.procs import processes_named


@needs_namespaces
def test_child_is_unprivileged_and_holds_no_capabilities():
    got = seen("""
        import json, os
        status = dict(l.split(":", 1) for l in open("/proc/self/status") if ":" in l)
        print(json.dumps({"uid": os.getuid(), "cap_eff": status["CapEff"].strip(),
                          "cap_bnd": status["CapBnd"].strip(), "nnp": status["NoNewPrivs"].strip()}))
    """)
    assert got["uid"] != 0
    if os.getuid() == 0:
        assert got["uid"] >= policy.UID_BASE, "as root, the child gets a uid of its own"
    else:
        assert got["uid"] == os.getuid()
    assert int(got["cap_eff"], 16) == 0 and int(got["cap_bnd"], 16) == 0
    assert got["nnp"] == "1"


@needs_namespaces
def test_child_sees_its_own_folder_and_none_of_the_grader():
    got = seen("""
        import json, os, sys
        secrets = json.loads(sys.argv[1])
        root = sys.argv[2]
        print(json.dumps({"cwd": sorted(os.listdir(".")),
                          "secrets": [p for p in secrets if os.path.lexists(p)],
                          "root": sorted(os.listdir(root)) if os.path.isdir(root) else [],
                          "home": os.listdir("/root") if os.path.isdir("/root") else []}))
    """, json.dumps(policy.secret_paths()), str(policy.ROOT),
        files={"predict.py": "x = 1\n", "bw.py": "y = 2\n"})
    assert got["cwd"] == ["bw.py", "predict.py"]
    assert got["secrets"] == [], "the child must not see the grader, its checks or the solutions"
    shown = {Path(p).relative_to(policy.ROOT).parts[0] for p in policy.view_paths()
             if Path(p).is_relative_to(policy.ROOT)}
    assert set(got["root"]) <= shown, f"the project root shows more than {shown}: {got['root']}"
    assert "shared" in got["root"]


@needs_namespaces
def test_child_sees_no_cgroup_but_its_own_and_every_mount_it_did_not_get_writable_is_read_only():
    """No other child's memory group (nor the grader's) is listed or named; every mount of the
    private root is read-only but the working folder, /tmp, /dev/shm and the device nodes (the
    read-only remount of /sys reaches its submounts, /sys/fs/cgroup/* on cgroup v1)."""
    info = seen("""
        import json, os
        writable = []
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                if "rw" in fields[5].split(","):
                    writable.append(fields[4])
        try:
            listed = os.listdir("/sys/fs/cgroup")
        except OSError:      # covered: an empty folder nobody may list
            listed = []
        with open("/proc/self/cgroup") as f:
            groups = [line.rstrip("\\n").split(":", 2)[2] for line in f]
        print(json.dumps({"writable": writable, "listed": listed, "groups": groups, "cwd": os.getcwd()}))
    """)
    assert info["listed"] == []
    assert set(info["groups"]) == {"/"}
    allowed = {info["cwd"], "/tmp", "/dev/shm", "/dev", "/", "/proc"}   # /proc: its own pid namespace's
    assert [p for p in info["writable"] if p not in allowed and not p.startswith("/dev/")] == []


@needs_namespaces
def test_child_has_no_network_not_even_the_graders_loopback():
    with loopback.listener() as (port, accepted):
        got = seen("""
            import json, socket, sys
            out = {}
            for host, port in (("127.0.0.1", int(sys.argv[1])), ("192.0.2.1", 80)):
                s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                s.settimeout(2)
                try:
                    s.connect((host, port)); s.sendall(b"leak"); out[host] = "connected"
                except OSError as exc:
                    out[host] = type(exc).__name__
            print(json.dumps(out))
        """, str(port))
    assert got["127.0.0.1"] != "connected" and got["192.0.2.1"] != "connected", got
    assert accepted == [], "the grader's loopback service received a connection from the child"


@needs_namespaces
def test_rlimits_are_the_policys():
    limits = policy.JailLimits()
    got = seen("""
        import json, resource
        names = ("AS", "NPROC", "NOFILE", "FSIZE", "CPU", "CORE")
        print(json.dumps({n.lower(): resource.getrlimit(getattr(resource, "RLIMIT_" + n)) for n in names}))
    """)
    want = limits.rlimits(limits.processes)
    for name, value in want.items():
        assert got[name] == [value, value], f"RLIMIT_{name.upper()}: {got[name]} != {value}"


@needs_namespaces
def test_fork_bomb_fails_fast_and_leaves_nothing_behind():
    cap = policy.JailLimits().processes
    got = seen("""
        import json, os, time
        made, refused = 0, None
        for _ in range(10_000):
            try:
                pid = os.fork()
            except OSError as exc:
                refused = type(exc).__name__
                break
            if pid == 0:
                try:
                    os.setsid()
                    open("/proc/self/comm", "w").write("why17-bombling")
                finally:
                    time.sleep(600)
                    os._exit(0)
            made += 1
        print(json.dumps({"made": made, "refused": refused}), flush=True)
    """, timeout=60)
    assert got["refused"] == "BlockingIOError", "fork must be refused (EAGAIN) at the process limit"
    assert 0 < got["made"] < cap
    deadline = time.monotonic() + 10
    while processes_named("why17-bombling") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_named("why17-bombling") == [], "forked processes outlived the sandbox"


@needs_namespaces
def test_grandchild_in_a_new_session_dies_with_the_sandbox():
    rc, out, err = run_jailed("""
        import os, time
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                open("/proc/self/comm", "w").write("why17-escapee")
                time.sleep(600)
            os._exit(0)
        time.sleep(0.5)
        print("left", flush=True)
    """)
    assert rc == 0 and "left" in out, err
    deadline = time.monotonic() + 10
    while processes_named("why17-escapee") and time.monotonic() < deadline:
        time.sleep(0.1)
    assert processes_named("why17-escapee") == []


@needs_namespaces
def test_big_file_and_many_files_are_refused():
    limits = policy.JailLimits()
    got = seen("""
        import json, os
        block, size = b"x" * 2**20, 0
        try:
            with open("big.bin", "wb") as f:
                while size < 2**32:
                    f.write(block); f.flush(); size += len(block)
        except OSError as exc:
            big = type(exc).__name__
        fds = []
        try:
            while len(fds) < 100_000:
                fds.append(os.open("/dev/null", os.O_RDONLY))
        except OSError as exc:
            many = type(exc).__name__
        print(json.dumps({"big": big, "size": os.path.getsize("big.bin"), "many": many, "fds": len(fds)}))
    """)
    assert got["big"] == "OSError" and got["size"] <= limits.file_size_bytes
    assert got["many"] == "OSError" and got["fds"] < limits.open_files


def test_a_sandbox_that_cannot_be_built_stops_with_one_line():
    workdir = Path(tempfile.mkdtemp(prefix="why17-jailtest-"))
    shutil.rmtree(workdir)                      # the private folder is gone: the jail must refuse
    argv = isolation.wrap([sys.executable, "-c", "print('student code ran')"], workdir)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    cgroup.remove(policy.group_name(workdir))   # the memory cgroup wrap made for it, if any
    assert done.returncode == 125
    assert "student code ran" not in done.stdout
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("sandbox: could not start the sandboxed process:")


def _reachable_by_others(path: str) -> bool:
    """Whether a user with no relation to the owners can reach ``path`` (o+x on every folder)."""
    parts = Path(path).resolve().parts
    for i in range(1, len(parts)):
        if not os.stat(Path(*parts[:i])).st_mode & 0o001:
            return False
    return True


def test_plain_mode_says_what_it_cannot_protect():
    env = dict(os.environ, **{settings.SANDBOX.name: "plain"})
    done = subprocess.run([sys.executable, "-c",
                           "from autograder.sandbox import isolation; print(isolation.protection().describe())"],
                          capture_output=True, text=True, cwd=policy.ROOT, env=env, timeout=120)
    if os.getuid() == 0 and not _reachable_by_others(sys.base_prefix):
        # The interpreter lives where an unprivileged uid cannot go (e.g. /root/.pyenv): plain mode
        # cannot run student code as another user, so it must refuse rather than run it as root.
        assert done.returncode != 0
        assert "sandbox: cannot start a sandboxed process at all" in done.stderr
        return
    assert done.returncode == 0, done.stderr
    text = done.stdout
    assert text.startswith("Sandbox (plain):")
    assert f"WITHOUT namespaces ({settings.SANDBOX.name}=plain)" in text
    abi = confine.landlock_abi()
    if abi >= 4:     # Landlock refuses TCP; the seccomp filter UDP
        assert "with no network" in text and f"Landlock (ABI {abi})" in text
    else:
        assert "WITH network access (not isolated)" in text
    if abi:          # Landlock keeps the child to what the private root would show
        assert "unable to read the grader, its hidden tests or the reference solutions" in text
        return
    assert f"no Landlock ({confine.landlock_missing()})" in text
    readable = [p for p in policy.secret_paths() if os.path.exists(p) and os.stat(p).st_mode & 0o004]
    if readable:
        assert "COULD read grader files" in text and readable[0] in text


def test_protection_line_names_the_limits():
    text = PROT.describe(policy.JailLimits(address_space_bytes=2048 * 2**20, processes=40))
    assert f"Sandbox ({PROT.mode}):" in text
    assert "2048 MiB address space" in text and "40 processes+threads" in text
    assert ("with no network" in text) == (not PROT.network)


@needs_namespaces
def test_a_child_gets_the_graders_font_list_naming_only_fonts_it_can_read(tmp_path, monkeypatch):
    """The grader's matplotlib font list is copied into the child's own matplotlib folder (its
    imports of matplotlib then scan no font), less every font the private root does not show."""
    shown = os.path.realpath(sys.executable)            # the venv's Python: in the view
    hidden = [str(policy.ROOT / "course.yml"), str(tmp_path / "mine.ttf")]
    (tmp_path / "mine.ttf").write_text("not a font")
    fonts = [{"fname": name, "name": name} for name in ("fonts/ttf/DejaVuSans.ttf", shown, *hidden)]
    cache = tmp_path / "mpl"
    cache.mkdir()
    (cache / "fontlist-v9.9.json").write_text(json.dumps({"_version": "9.9", "ttflist": fonts, "afmlist": []}))
    monkeypatch.setenv("MPLCONFIGDIR", str(cache))
    got = seen("""
        import json, os
        home = os.environ["MPLCONFIGDIR"]
        data = json.load(open(os.path.join(home, "fontlist-v9.9.json")))
        print(json.dumps({"files": os.listdir(home), "writable": os.access(home, os.W_OK),
                          "fonts": [f["fname"] for f in data["ttflist"]]}))
    """)
    assert got == {"files": ["fontlist-v9.9.json"], "writable": True,
                   "fonts": ["fonts/ttf/DejaVuSans.ttf", shown]}

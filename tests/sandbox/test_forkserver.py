"""The fork server: children behave like freshly started interpreters, isolated from each other,
with the import of torch already paid; the server survives children that crash, hang or hog memory.
Real processes throughout."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from autograder.sandbox import forkserver
from tests.helpers.paths import ROOT

#: Slow, left out of `make check`: most tests share a fork server that imports torch.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def server():
    srv = forkserver.ForkServer(preload=("torch",))
    yield srv
    srv.close()


def run(server, code: str, *args, stdin: bytes | None = None, timeout: float = 60, **kw):
    proc = server.spawn([sys.executable, "-c", code, *args], stdin=forkserver.PIPE,
                        stdout=forkserver.PIPE, stderr=forkserver.PIPE, **kw)
    out, err = proc.communicate(stdin, timeout=timeout)
    return proc.returncode, out.decode(), err.decode()


def test_torch_is_imported_once_in_the_server_not_per_child(server):
    code, out, _ = run(server, "import sys; print('torch' in sys.modules)")
    assert (code, out.strip()) == (0, "True")
    assert "torch" in server.preloaded


def test_child_gets_argv_stdin_env_cwd_and_exit_status(server, tmp_path):
    code, out, err = run(server, "import os, sys; print(sys.argv[1:], sys.stdin.read(), "
                         "os.environ.get('WHY17_X'), os.getcwd()); print('e', file=sys.stderr); "
                         "sys.exit(5)", "a", "b", stdin=b"hello",
                         env={"WHY17_X": "42", "PATH": os.environ["PATH"]}, cwd=tmp_path)
    assert code == 5
    assert out.strip() == f"['a', 'b'] hello 42 {tmp_path}"
    assert err.strip() == "e"


def test_each_child_is_a_new_process_in_its_own_session(server):
    _, out1, _ = run(server, "import os; print(os.getpid(), os.getsid(0))")
    _, out2, _ = run(server, "import os; print(os.getpid(), os.getsid(0))")
    (pid1, sid1), (pid2, sid2) = (map(int, o.split()) for o in (out1, out2))
    assert pid1 != pid2 and pid1 != os.getpid()
    assert sid1 == pid1 and sid2 == pid2


def test_thread_count_follows_the_childs_environment(server):
    code, out, _ = run(server, "import torch; print(torch.get_num_threads())",
                       env={"OMP_NUM_THREADS": "1", "PATH": os.environ["PATH"]})
    assert (code, out.strip()) == (0, "1")


def test_children_do_not_share_state(server):
    code, _, _ = run(server, "import torch; torch.secret_from_child = 1; import json; json.dumps = None")
    assert code == 0
    _, out, _ = run(server, "import torch, json; print(hasattr(torch, 'secret_from_child'), json.dumps([1]))")
    assert out.strip() == "False [1]"


def test_exceptions_signals_and_os_exit_report_like_an_interpreter(server):
    code, _, err = run(server, "raise ValueError('boom')")
    assert code == 1 and "ValueError: boom" in err
    assert run(server, "import os; os._exit(7)")[0] == 7
    assert run(server, "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)")[0] == -signal.SIGSEGV


def test_memory_limit_applies_to_the_child_only(server):
    code, out, err = run(server, "x = bytearray(3 * 2**30); print('allocated')",
                         rlimits={"RLIMIT_AS": (2 * 2**30, 2 * 2**30)})
    assert code == 1 and "MemoryError" in err and "allocated" not in out
    assert run(server, "x = bytearray(64 * 2**20); print(len(x))")[1].strip() == str(64 * 2**20)


def test_a_hang_times_out_and_is_killed_without_harming_the_server(server):
    proc = server.spawn([sys.executable, "-c", "while True: pass"])
    with pytest.raises(subprocess.TimeoutExpired):
        proc.wait(timeout=0.5)
    assert proc.poll() is None
    proc.kill()
    assert proc.wait(timeout=10) == -signal.SIGKILL
    assert run(server, "print('still serving')")[1].strip() == "still serving"


def test_pass_fds_reach_the_child_under_their_numbers(server):
    r, w = os.pipe()
    try:
        proc = server.spawn([sys.executable, "-c", f"import os; os.write({w}, b'via fd'); os.close({w})"],
                            pass_fds=(w,))
        os.close(w)
        assert proc.wait(timeout=60) == 0
        assert os.read(r, 100) == b"via fd"
    finally:
        os.close(r)


def test_other_descriptors_are_closed_in_the_child(server):
    r, w = os.pipe()
    try:
        code, _, err = run(server, f"import os; os.write({w}, b'x')")
        assert code == 1 and "Bad file descriptor" in err
    finally:
        os.close(r)
        os.close(w)


def test_script_and_module_forms(server, tmp_path):
    script = tmp_path / "prog.py"
    script.write_text("import sys; print('script', sys.argv[1:], sys.path[0] == %r)" % str(tmp_path))
    proc = server.spawn([sys.executable, str(script), "x"], stdout=forkserver.PIPE)
    assert proc.communicate(timeout=60)[0].decode().strip() == "script ['x'] True"
    proc = server.spawn([sys.executable, "-I", "-S", str(script), "x"], stdout=forkserver.PIPE)
    assert proc.communicate(timeout=60)[0].decode().strip() == "script ['x'] False"
    proc = server.spawn([sys.executable, "-m", "json.tool"], stdin=forkserver.PIPE, stdout=forkserver.PIPE)
    assert proc.communicate(b'{"a":1}', timeout=60)[0].decode().split() == ["{", '"a":', "1", "}"]


def test_children_die_with_the_server():
    srv = forkserver.ForkServer(preload=())
    proc = srv.spawn([sys.executable, "-c", "import time; time.sleep(600)"])
    pid = proc.pid
    srv.close()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and _alive(pid):
        time.sleep(0.05)
    assert not _alive(pid)


def test_start_active_stop_manage_one_server_per_process():
    forkserver.stop()        # one an earlier grading in this process kept (forkserver.ensure)
    assert forkserver.active() is None
    srv = forkserver.start(preload=())
    try:
        assert forkserver.active() is srv and forkserver.start() is srv
    finally:
        forkserver.stop()
    assert forkserver.active() is None


def test_start_without_waiting_serves_once_ready():
    srv = forkserver.ForkServer(preload=("json",), wait=False)
    try:
        assert srv.preloaded is None
        proc = srv.spawn([sys.executable, "-c", "print('ok')"], stdout=forkserver.PIPE)
        assert proc.communicate(timeout=60)[0] == b"ok\n" and srv.preloaded == ("json",)
    finally:
        srv.close()


def test_bad_pass_fds_are_refused_with_a_reason(server):
    with pytest.raises(forkserver.ForkServerError, match="above 2"):
        server.spawn([sys.executable, "-c", "pass"], pass_fds=(1,))


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _blocking_module(lib, name: str, started, release) -> None:
    """A module whose import marks ``started`` and then waits (up to 10 min) for ``release``."""
    lib.mkdir(exist_ok=True)
    (lib / f"{name}.py").write_text(
        "import os, time\n"
        f"open({str(started)!r}, 'w').close()\n"
        f"while not os.path.exists({str(release)!r}):\n"
        "    time.sleep(0.01)\n")


def _wait_for(path, what: str) -> None:
    for _ in range(60_000):
        if path.exists():
            return
        time.sleep(0.01)
    raise AssertionError(f"{what} never happened")


def test_the_server_imports_later_before_it_is_ready(tmp_path):
    """LATER follows PRELOAD before the server says it is ready: every child it forks holds it."""
    started, release = tmp_path / "started", tmp_path / "release"
    _blocking_module(tmp_path / "lib", "why17_slow_later2", started, release)
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "lib")}
    srv = forkserver.ForkServer(preload=(), later=("why17_slow_later2",), env=env, wait=False, huge_pages=False)
    try:
        _wait_for(started, "the import of LATER")
        assert not srv.is_ready()
        release.touch()
        code = "import sys; print('why17_slow_later2' in sys.modules)"
        proc = srv.spawn([sys.executable, "-c", code], stdout=forkserver.PIPE)
        out, _ = proc.communicate(timeout=120)
        assert out.decode().strip() == "True"
    finally:
        release.touch()
        srv.close()


def test_every_server_holds_what_each_sandboxed_child_runs_whatever_it_preloads():
    """The engine's own preload: the jail (with confine.py, rootfs.py and inprocess.py under their
    own names, kept by every child) and the runner's imports; the rest is the grader package's."""
    srv = forkserver.ForkServer(preload=())
    try:
        code = "import sys; print(sorted(m for m in sys.modules if m.startswith('_why17_')), 'torch' in sys.modules)"
        proc = srv.spawn([sys.executable, "-c", code], stdout=forkserver.PIPE)
        out = proc.communicate(timeout=60)[0].decode().strip()
        assert out == "['_why17_confine', '_why17_inprocess', '_why17_rootfs'] False" and srv.preloaded == ()
    finally:
        srv.close()


def test_a_package_star_preloads_each_of_its_modules_but_not_its_main(tmp_path):
    """``PACKAGE.*`` imports the package and every module in it, except ``_``-named ones (a
    ``__main__`` would run its command): a child finds them all imported without importing them."""
    package = tmp_path / "lib" / "why17_star"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "one.py").write_text("")
    (package / "two.py").write_text("")
    (package / "__main__.py").write_text("raise SystemExit('__main__ ran')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "lib")}
    srv = forkserver.ForkServer(preload=("why17_star.*",), env=env, huge_pages=False)
    try:
        code = "import sys; print(sorted(m for m in sys.modules if m.startswith('why17_star')))"
        proc = srv.spawn([sys.executable, "-c", code], stdout=forkserver.PIPE)
        out = proc.communicate(timeout=60)[0].decode().strip()
        assert out == "['why17_star', 'why17_star.one', 'why17_star.two']"
        assert srv.preloaded == ("why17_star.*",)
    finally:
        srv.close()


def test_the_lessons_server_holds_every_simulated_gpu_module_a_torch_child_imports():
    """A torch file's child imports every module of shared.simgpu before the student's code runs
    (``conceal``): the lesson's server has imported each, so no child pays an import of its own."""
    from autograder.lessons import why17

    srv = forkserver.ForkServer(preload=why17.LESSON.server_preload, huge_pages=False)
    try:
        code = ("import pkgutil, sys, shared.simgpu as s; print([i.name for i in pkgutil.iter_modules(s.__path__) "
                "if not i.name.startswith('_') and 'shared.simgpu.' + i.name not in sys.modules])")
        proc = srv.spawn([sys.executable, "-c", code], stdout=forkserver.PIPE, cwd=ROOT)
        out = proc.communicate(timeout=120)[0].decode().strip()
        assert out == "[]"
    finally:
        srv.close()


def test_what_a_server_imports_for_an_assignment_comes_from_its_grader_package():
    from autograder.core import course, lesson
    from autograder.lessons import why17

    imports = lesson.server_imports(course.load().assignment("why17"))
    assert imports == {"preload": why17.LESSON.server_preload, "later": why17.LESSON.server_later}
    assert imports["preload"][:2] == ("numpy", "torch") and imports["later"] == ("matplotlib", "matplotlib.pyplot")
    tiny = course.load(ROOT / "tests" / "fixtures" / "tiny_course" / "course.yml").assignment()
    assert lesson.server_imports(tiny) == {"preload": (), "later": ()}   # a package that names none


def test_the_launcher_tells_the_jail_to_run_in_process_only_a_child_it_forked(server, tmp_path, monkeypatch):
    """launch_child puts ``in_process`` in the jail's policy: true when the fork server started the
    child (the jail then runs the runner in the forked process), false for a fresh interpreter."""
    from autograder.sandbox.forkserver import client
    from autograder.sandbox.parent import Limits, Sandbox

    (tmp_path / "m.py").write_text("def f(x):\n    return 2 * x\n")
    for active, forked in ((server, True), (None, False)):
        monkeypatch.setattr(client, "_active", active)
        with Sandbox(tmp_path, Limits(time_limit_s=60.0), preload=(), simgpu=False) as box:
            assert box.call("m", "f", (21,))[0] == 42
            policy = json.loads(box.child.proc.args[box.child.proc.args.index("--") - 1])
            assert isinstance(box.child.proc, forkserver.ForkedProcess) is forked
            assert policy["in_process"] is forked


def test_a_client_gone_with_a_reply_unread_is_a_closed_connection_not_a_traceback():
    """A grade that exits at once (a bad zip: exit 2) may leave the server's reply unread; the
    kernel then resets the connection, and the server must see its client gone, not crash
    printing a traceback onto the TA's terminal."""
    import socket

    from autograder.sandbox.forkserver import wire
    server_end, client_end = socket.socketpair()
    server_end.sendall(b"a reply the client never reads")
    client_end.close()
    assert wire.recv_msg(server_end, with_fds=True) == (None, [])
    server_end.close()



def _heap_advised(pid: int) -> bool:
    """Whether process ``pid``'s malloc heap is advised to use huge pages (``hg`` in its VmFlags)."""
    with open(f"/proc/{pid}/smaps") as f:
        text = f.read()
    heap = text.split("[heap]\n", 1)
    flags = [line for line in heap[-1].splitlines() if line.startswith("VmFlags:")][:1]
    return len(heap) == 2 and bool(flags) and "hg" in flags[0].split()


def _thp_mode() -> str:
    try:
        with open("/sys/kernel/mm/transparent_hugepage/enabled") as f:
            return f.read().split("[", 1)[1].split("]", 1)[0]
    except (OSError, IndexError):
        return "unknown"


@pytest.mark.skipif(_thp_mode() != "madvise", reason="glibc advises its heap only where transparent huge "
                    "pages are 'madvise' (with 'always' every heap uses them, with 'never' none)")
def test_the_servers_heap_grows_in_huge_pages_without_moving_it():
    """Is the server's malloc heap (whose page tables each fork copies) advised to grow in 2 MiB
    pages, although the server was told not to move its heap (huge_pages=False, as `grade` starts it)?"""
    srv = forkserver.ForkServer(preload=("numpy",), huge_pages=False)
    try:
        assert _heap_advised(srv.pid)
    finally:
        srv.close()


_CROWD = """
import sys, threading, torch
src, errors = torch.ones(2**20, dtype=torch.uint8), []
start = threading.Barrier(8)
def copy():
    start.wait()
    try:
        torch.empty_like(src).copy_(src)
    except RuntimeError as exc:
        errors.append(str(exc).splitlines()[0])
threads = [threading.Thread(target=copy) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
sys.exit(3 if errors else 0)
"""

_FORKS = """
import os, sys, torch
sys.path.insert(0, sys.argv[1])
import inprocess
src = torch.ones(2**20, dtype=torch.uint8)
torch.empty_like(src).copy_(src)       # the pool exists (a thread a core): each fork marks it stale
torch.set_num_threads(1)                # as the fork server's child does (OMP_NUM_THREADS=1)
failed = 0
for _ in range(int(sys.argv[3])):
    pid = os.fork()
    if pid == 0:
        inprocess.run_script([sys.executable, sys.argv[2]])
    failed += os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]) != 0
print(failed)
"""


def test_a_forked_childs_threads_can_start_on_torch_together(tmp_path):
    """Torch marks its thread pool stale at each fork (the fork server's, then the jail's). A
    forked child that runs a program must rebuild it first: left to the program, threads touching
    torch at once each see the stale pool and one raises "Invalid thread pool!" (without the
    rebuild, in most of these children)."""
    script = tmp_path / "crowd.py"
    script.write_text(_CROWD)
    sandbox_dir = ROOT / "autograder" / "sandbox"
    done = subprocess.run([sys.executable, "-c", _FORKS, str(sandbox_dir), str(script), "12"],
                          capture_output=True, text=True, timeout=300,
                          env={k: v for k, v in os.environ.items() if k != "OMP_NUM_THREADS"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "0"


def test_the_server_drops_the_grader_modules_once_before_it_is_ready():
    """Each child takes the grader's modules out of sys.modules before its program runs; the
    server does it once before it says it is ready, so the children find none to drop."""
    code = """
import os, socket, sys, threading
from autograder.sandbox.forkserver import server, wire
ours, theirs = socket.socketpair()

def client():
    ready = wire.recv_msg(ours)
    print(ready["ready"], sorted(m for m in sys.modules if m.split(".")[0] == "autograder"), flush=True)
    os._exit(0)

threading.Thread(target=client, daemon=True).start()
server.serve(theirs.fileno(), [], None, (), False)
"""
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "True []", done.stderr[-2000:]


def test_a_childs_small_work_starts_no_full_collection_of_the_servers_objects():
    """The server collects once before it is ready: a child that keeps a few thousand objects
    never runs the collector over the whole image it shares with the server (which, with torch
    imported, took about 90 CPU ms a child and copied most of the image's pages)."""
    srv = forkserver.ForkServer(preload=("torch",), huge_pages=False)
    try:
        code = ("import gc\nfull = []\ngc.callbacks.append(lambda phase, info: phase == 'start' and "
                "info['generation'] == 2 and full.append(1))\nkept = [[i] for i in range(20000)]\nprint(len(full))")
        proc = srv.spawn([sys.executable, "-c", code], stdout=forkserver.PIPE)
        assert proc.communicate(timeout=120)[0].decode().strip() == "0"
    finally:
        srv.close()

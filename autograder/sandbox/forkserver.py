"""A fork server: import torch once, then start each Python child by forking, not by exec.

Starting ``python`` and importing torch costs seconds; a batch of hundreds of submissions pays it
once per child. The fork server is a small single-threaded process that imports the heavy libraries
(``PRELOAD``) once and then, on request, forks a child that behaves as if it had been started with
``python -m MODULE ARGS`` (or ``python SCRIPT ARGS``, ``python -c CODE ARGS``): fresh ``sys.argv``,
``sys.path``, environment, working folder, standard streams, resource limits, its own session, and
death when the fork server dies. Each child is still its own process, so student code keeps the
isolation of the sandbox; only the import is shared (copy-on-write pages).

Client side: ``start()`` launches a server for this process (a grade-all worker does it once);
``active()`` returns it or None; ``server.spawn(argv, stdin=PIPE, ...)`` returns a ``ForkedProcess``
with the ``subprocess.Popen`` methods a launcher uses (pid, stdin/stdout/stderr, poll, wait, kill,
terminate, send_signal, communicate, returncode).

Wire protocol (a Unix socket pair): a request is a 4-byte length, a JSON body and, attached with
SCM_RIGHTS, the file descriptors for the child's stdin, stdout, stderr, the status pipe and any
``pass_fds``; the reply is the child's pid (or an error line). When the child exits, the server
writes its wait status (4 bytes) to the status pipe and closes it.
"""
from __future__ import annotations

import array
import json
import os
import select
import signal
import socket
import struct
import subprocess
import sys
import threading
import time

from autograder.core import settings
from autograder.runtime import runner as _runner
from autograder.sandbox import jail as _jail

#: Modules the server imports once, in this order, before it says it is ready; a module that
#: fails to import is skipped. After torch, the simulated GPU's modules (shared/simgpu), which
#: every child of a torch file installs: their code is then compiled once per server, not once per
#: child (sandboxed children may not write bytecode: 0.045 CPU s a child on this 2-core machine).
PRELOAD = ("numpy", "torch", "yaml", "shared.simgpu.patches", "shared.simgpu.mode",
           "shared.simgpu.frontend", "shared.simgpu.device", "shared.devices", "shared.validate")
#: Modules the server imports after it is ready, one at a time while no request waits: the first
#: children (bw.py, flops.py) need torch only, so a cold grading does not wait for matplotlib,
#: and the children forked later (roofline.py) find it imported.
LATER = ("matplotlib", "matplotlib.pyplot")
#: Seconds without a request before the server imports the next of LATER: the first requests of
#: a cold grading (the reference's child and the student's, a few ms apart) do not wait for it.
LATER_IDLE_S = 0.2
#: Scripts every sandboxed child runs in-process (the jail, then the runner): the server compiles
#: them once and a child runs that code while the file is unchanged (``jail.run_main``).
SCRIPTS = tuple(os.path.realpath(module.__file__) for module in (_jail, _runner))
#: Most file descriptors one request may carry (stdin, stdout, stderr, status, pass_fds).
MAX_FDS = 16
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
STDOUT = subprocess.STDOUT
_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36
#: Seconds the server may take to stop (kill and reap its children) before the client kills it.
STOP_TIMEOUT_S = 5.0

_active: "ForkServer | None" = None
_stop_at_exit = False
#: Environment variable: "0" turns fork servers off for ``ensure`` (grade-all workers read it too).
ENV = settings.FORKSERVER.name


class ForkServerError(RuntimeError):
    """The fork server could not start a child (the message says why)."""


# --------------------------------------------------------------------------- client side


def start(preload=PRELOAD, env: dict | None = None, wait: bool = True, later=LATER,
          huge_pages: bool = True) -> "ForkServer":
    """Start this process's fork server (once) and make it the one ``active()`` returns.

    ``wait=False`` returns while the server is still importing, so the caller can do its own
    imports meanwhile; the first ``spawn`` waits for it. ``huge_pages=False``: the server does
    not move its heap into huge pages (``_huge_pages``), for a process that forks a handful of
    children (one grading), where the 0.2-0.3 s it takes before the server is ready outweighs
    the 15 ms it saves per fork."""
    global _active, _stop_at_exit
    if _active is None or not _active.alive():
        _active = ForkServer(preload=preload, env=env, wait=wait, later=later, huge_pages=huge_pages)
        if not _stop_at_exit:   # reaped at exit: its children's CPU time is counted in ours
            import atexit
            atexit.register(stop)
            _stop_at_exit = True
    return _active


def ensure() -> "ForkServer | None":
    """This process's fork server, started (without waiting) when there is none, and kept until
    the process ends: every grading in the process forks its children from it, so torch is
    imported once per process, not once per child. None when the FORKSERVER setting is 0 (then
    each child is a fresh interpreter)."""
    if not settings.FORKSERVER.get():
        return None
    return active() or start(wait=False)


def active() -> "ForkServer | None":
    """The running fork server of this process, or None (then launchers use subprocess)."""
    return _active if _active is not None and _active.alive() else None


def stop() -> None:
    """Stop this process's fork server, if any."""
    global _active
    if _active is not None:
        _active.close()
        _active = None


#: What the server's environment keeps of the grader's: what Python, the libraries it preloads and
#: the grader's own settings (autograder/core/settings.py) read. Every child forks from the server, and a forked
#: process's /proc/self/environ shows the environment its image was started with, so nothing else
#: of the grader's shell (the simulated GPU's secret, a TA's tokens) may be in it.
SERVER_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR", "MPLBACKEND", "MPLCONFIGDIR",
              "OMP_NUM_THREADS", "MKL_NUM_THREADS", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
              "PYTHONHASHSEED")


def server_environment(env) -> dict:
    """The fork server's environment: ``env`` cleared to SERVER_ENV and the grader's settings,
    never the simulated GPU's secret (autograder/gpu/seed.py)."""
    kept = {s.name for s in settings.ALL} - {settings.SIM_SECRET.name}
    out = {k: v for k, v in env.items() if k in SERVER_ENV or k in kept}
    out.setdefault("MPLBACKEND", "Agg")
    return out


class ForkServer:
    """Client handle of one fork server process (thread-safe)."""

    def __init__(self, preload=PRELOAD, env: dict | None = None, wait: bool = True, later=(),
                 huge_pages: bool = True):
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = server_environment(os.environ if env is None else env)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.sandbox.forkserver", str(child_sock.fileno()), ",".join(preload),
             str(os.getpid()), ",".join(later), "1" if huge_pages else "0"],
            pass_fds=(child_sock.fileno(),), stdin=subprocess.DEVNULL, env=env, cwd=root)
        child_sock.close()
        self._sock = parent_sock
        self._lock = threading.Lock()
        self.pid = self._proc.pid
        self.preloaded: tuple[str, ...] | None = None
        #: Modules of LATER the server had still to import at its last reply (see ``settled``).
        self.later_left = len(later)
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Block until the server has imported ``preload`` (once); ForkServerError if it died."""
        if self.preloaded is not None:
            return
        with self._lock:
            if self.preloaded is not None:
                return
            ready = _recv_msg(self._sock)
            if ready is None or ready.get("ready") is not True:
                self.close()
                raise ForkServerError("the fork server did not start")
            self.preloaded = tuple(ready.get("preloaded", ()))

    def is_ready(self) -> bool:
        """Whether the server has imported ``preload``, without waiting for it."""
        if self.preloaded is not None:
            return True
        readable, _, _ = select.select([self._sock], [], [], 0)
        if readable:
            self.wait_ready()
        return self.preloaded is not None

    def settled(self) -> bool:
        """Ready, and done with LATER as of its last reply, so a fork now does not queue behind
        an import (a few tenths of a second each). Until then, a child that preloads nothing
        starts sooner as a fresh interpreter (``launch_child``'s ``early``)."""
        return self.is_ready() and self.later_left == 0

    def alive(self) -> bool:
        return self._proc.poll() is None

    def close(self) -> None:
        """Stop the server: it kills and reaps its children (so their CPU time is counted in
        this process's RUSAGE_CHILDREN), then exits; killed if it takes too long."""
        try:
            self._sock.close()
        finally:
            if self.preloaded is None:     # never used (still importing, or no child forked yet)
                self._proc.kill()
            try:
                self._proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def spawn(self, argv, *, stdin=None, stdout=None, stderr=None, env=None, cwd=None,
              rlimits=None, pass_fds=(), start_new_session=True, close_fds=True) -> "ForkedProcess":
        """Start ``argv`` (``[python, '-m', module, ...]``, ``[python, script, ...]`` or
        ``[python, '-c', code, ...]``) as a forked child.

        stdin/stdout/stderr: None (inherit this process's), PIPE, DEVNULL, an fd or a file object;
        stderr may be STDOUT. ``rlimits`` maps resource.RLIMIT_* numbers (or their names) to
        (soft, hard). ``pass_fds`` are kept open in the child under the same numbers; every
        other descriptor is closed (``close_fds`` is accepted for Popen's sake and always true).
        """
        self.wait_ready()
        argv = [str(a) for a in argv]
        to_close, mine = [], {}
        fds = []
        try:
            for index, spec in enumerate((stdin, stdout, stderr)):
                if index == 2 and spec == STDOUT:
                    fds.append(fds[1])
                    continue
                fd, keep = _child_end(spec, index, to_close)
                fds.append(fd)
                if keep is not None:
                    mine[index] = keep
            status_r, status_w = os.pipe()
            to_close.append(status_w)
            fds.append(status_w)
            if any(int(fd) <= 2 for fd in pass_fds):
                raise ForkServerError("pass_fds must be above 2 (0, 1, 2 are stdin, stdout, stderr)")
            fds.extend(int(fd) for fd in pass_fds)
            if len(fds) > MAX_FDS:
                raise ForkServerError(f"too many pass_fds ({len(pass_fds)}), at most {MAX_FDS - 4}")
            request = {"argv": argv, "env": None if env is None else dict(env),
                       "cwd": None if cwd is None else os.fspath(cwd),
                       "rlimits": _limits(rlimits), "pass_fds": [int(fd) for fd in pass_fds],
                       "session": bool(start_new_session)}
            with self._lock:
                _send_msg(self._sock, request, fds)
                reply = _recv_msg(self._sock)
        except BaseException:
            for keep in mine.values():
                os.close(keep)
            raise
        finally:
            for fd in to_close:
                os.close(fd)
        if reply is None:
            os.close(status_r)
            for keep in mine.values():
                os.close(keep)
            raise ForkServerError("the fork server died")
        if "error" in reply:
            os.close(status_r)
            for keep in mine.values():
                os.close(keep)
            raise ForkServerError(reply["error"])
        self.later_left = int(reply.get("later_left", 0))
        return ForkedProcess(argv, reply["pid"], status_r,
                             stdin=mine.get(0), stdout=mine.get(1), stderr=mine.get(2))


def _child_end(spec, index: int, to_close: list) -> tuple[int, int | None]:
    """(fd the child gets, fd this process keeps or None) for one of stdin/stdout/stderr."""
    if spec is None:
        return index, None
    if spec == PIPE:
        r, w = os.pipe()
        child, keep = (r, w) if index == 0 else (w, r)
        to_close.append(child)
        return child, keep
    if spec == DEVNULL:
        fd = os.open(os.devnull, os.O_RDONLY if index == 0 else os.O_WRONLY)
        to_close.append(fd)
        return fd, None
    if isinstance(spec, int):
        return spec, None
    return spec.fileno(), None


def _limits(rlimits) -> dict:
    import resource
    out = {}
    for key, (soft, hard) in (rlimits or {}).items():
        number = getattr(resource, key) if isinstance(key, str) else int(key)
        out[str(number)] = [int(soft), int(hard)]
    return out


class ForkedProcess:
    """A child started by the fork server, with the subset of ``subprocess.Popen`` launchers use."""

    def __init__(self, args, pid: int, status_fd: int, stdin=None, stdout=None, stderr=None):
        self.args = args
        self.pid = pid
        self.returncode: int | None = None
        self._status_fd = status_fd
        self._status_buf = b""
        self.stdin = os.fdopen(stdin, "wb") if stdin is not None else None
        self.stdout = os.fdopen(stdout, "rb") if stdout is not None else None
        self.stderr = os.fdopen(stderr, "rb") if stderr is not None else None
        self._wait_lock = threading.Lock()

    def __repr__(self):
        return f"<ForkedProcess pid={self.pid} returncode={self.returncode}>"

    def _collect(self, timeout: float | None) -> bool:
        """Read the exit status if it arrives within ``timeout`` seconds; True once known."""
        if self.returncode is not None:
            return True
        with self._wait_lock:
            deadline = None if timeout is None else time.monotonic() + timeout
            while self.returncode is None:
                left = None if deadline is None else max(0.0, deadline - time.monotonic())
                ready, _, _ = select.select([self._status_fd], [], [], left)
                if not ready:
                    return False
                chunk = os.read(self._status_fd, 4 - len(self._status_buf))
                if not chunk:  # the server died before reporting: the child died with it
                    self._finish(-signal.SIGKILL)
                    break
                self._status_buf += chunk
                if len(self._status_buf) == 4:
                    status = struct.unpack("<i", self._status_buf)[0]
                    self._finish(os.waitstatus_to_exitcode(status))
        return True

    def _finish(self, code: int) -> None:
        self.returncode = code
        os.close(self._status_fd)
        self._status_fd = -1

    def poll(self) -> int | None:
        self._collect(0)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        if not self._collect(timeout):
            raise subprocess.TimeoutExpired(self.args, timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.poll() is None:
            try:
                os.kill(self.pid, sig)
            except ProcessLookupError:
                pass

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def communicate(self, input: bytes | None = None, timeout: float | None = None):
        """Send ``input``, read stdout and stderr to the end, wait; as Popen.communicate (bytes)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        out, err = [], []
        readers = {f.fileno(): (f, buf) for f, buf in ((self.stdout, out), (self.stderr, err)) if f}
        pending = memoryview(input or b"")
        writer = self.stdin
        if writer is not None and not pending:
            writer.close()
            writer = None
        while readers or writer is not None:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                raise subprocess.TimeoutExpired(self.args, timeout)
            rlist, wlist, _ = select.select(list(readers), [writer] if writer else [], [], left)
            for fd in rlist:
                chunk = os.read(fd, 65536)
                if chunk:
                    readers[fd][1].append(chunk)
                else:
                    readers.pop(fd)[0].close()
            if wlist:
                try:
                    written = os.write(writer.fileno(), pending[:65536])
                    pending = pending[written:]
                except BrokenPipeError:
                    pending = pending[:0]
                if not pending:
                    writer.close()
                    writer = None
        left = None if deadline is None else max(0.0, deadline - time.monotonic())
        self.wait(left)
        return (b"".join(out) if self.stdout else None, b"".join(err) if self.stderr else None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        for f in (self.stdin, self.stdout, self.stderr):
            if f:
                f.close()
        self.wait()


# --------------------------------------------------------------------------- wire format


def _send_msg(sock: socket.socket, body: dict, fds=()) -> None:
    data = json.dumps(body).encode()
    header = struct.pack("<I", len(data))
    if fds:
        sock.sendmsg([header], [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds))])
    else:
        sock.sendall(header)
    sock.sendall(data)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def _recv_msg(sock: socket.socket, with_fds: bool = False):
    fds = []
    if with_fds:
        msg, ancdata, _flags, _addr = sock.recvmsg(4, socket.CMSG_SPACE(MAX_FDS * 4))
        for level, kind, data in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                arr = array.array("i")
                arr.frombytes(data[:len(data) - len(data) % arr.itemsize])
                fds.extend(arr)
        if len(msg) < 4 and msg:
            rest = _recv_exact(sock, 4 - len(msg))
            msg = None if rest is None else msg + rest
        header = msg or None
    else:
        header = _recv_exact(sock, 4)
    if not header:
        return (None, fds) if with_fds else None
    body = _recv_exact(sock, struct.unpack("<I", header)[0])
    value = None if body is None else json.loads(body)
    return (value, fds) if with_fds else value


# --------------------------------------------------------------------------- server side


def _set_pdeathsig() -> None:
    """Ask Linux to SIGKILL this process when its parent dies (best effort elsewhere)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _set_subreaper() -> None:
    """Become the reaper of orphaned descendants (Linux): a sandbox whose launcher was killed
    leaves its processes to this server, which reaps them, so their CPU time is counted."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _serve(sock_fd: int, preload: list[str], client_pid: int | None = None, later=(),
           huge_pages: bool = True) -> None:
    _set_pdeathsig()
    _set_subreaper()
    if client_pid is not None and os.getppid() != client_pid:   # the client is already gone
        return
    server_pid = os.getpid()
    preloaded = [name for name in preload if _import(name)]
    compiled = _compile(SCRIPTS)
    if huge_pages:
        _huge_pages()
    later = list(later)
    base_path = list(sys.path[1:])
    sock = socket.socket(fileno=sock_fd)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    status_of: dict[int, int] = {}     # child pid -> status pipe (write end)
    try:
        _send_msg(sock, {"ready": True, "preloaded": preloaded})
    except OSError:   # the client went away while we imported
        return
    while True:
        ready, _, _ = select.select([sock, wake_r], [], [], LATER_IDLE_S if later else None)
        if not ready and later:   # idle: the next of LATER (a request waits one import at most)
            _reporting_exits(wake_r, status_of, _import, later.pop(0))
            if not later and huge_pages:
                _reporting_exits(wake_r, status_of, _huge_pages)
            continue
        if wake_r in ready:
            os.read(wake_r, 4096)
        _reap(status_of)
        if sock not in ready:
            continue
        request, fds = _recv_msg(sock, with_fds=True)
        if request is None:   # the client went away: kill what is left, reap it, and stop
            for pid in list(status_of):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _reap_all(time.monotonic() + STOP_TIMEOUT_S - 1.0)
            return
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            _send_msg(sock, {"error": f"fork failed: {exc.strerror}"})
            continue
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                os.close(wake_r)
                os.close(wake_w)
                sock.close()
                for fd in status_of.values():
                    os.close(fd)
                _child(request, fds, base_path, server_pid, compiled)
            finally:
                os._exit(70)
        stdin, stdout, stderr, status_w = fds[:4]
        for fd in set(fds) - {status_w}:
            os.close(fd)
        status_of[pid] = status_w
        _send_msg(sock, {"pid": pid, "later_left": len(later)})


def _compile(paths) -> dict:
    """path -> (source, code object) of each script in ``paths`` that reads and compiles."""
    out = {}
    for path in paths:
        try:
            with open(path, "rb") as f:
                source = f.read()
            out[path] = (source, compile(source, path, "exec", dont_inherit=True))
        except (OSError, SyntaxError, ValueError):
            pass
    return out


def _import(name: str) -> bool:
    """Import ``name``; False when it fails (a missing optional library only costs its import in
    each child that needs it)."""
    try:
        __import__(name)
        return True
    except Exception:
        return False


#: madvise advice (Linux): back a range with huge pages; and do it now (Linux 6.1 and later).
_MADV_HUGEPAGE, _MADV_COLLAPSE = 14, 25
_HUGE_PAGE = 2 * 2**20


def _huge_pages() -> None:
    """Move the imported libraries' heap (most of the server's 170 MB of private memory) into
    2 MiB pages, best effort. Each child starts with a fork of this process, and the sandbox forks
    it twice more (autograder/sandbox/jail.py); a fork copies the page tables of private memory,
    and an exit frees them: with huge pages there are 512 times fewer entries to copy and free
    (a fork and exit of the server's image: about 27 ms before, 12 ms after, on this 2-core
    machine). A child's first write to a page still copies that 4 KiB page alone."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.madvise.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
        with open("/proc/self/maps") as f:
            maps = f.read().splitlines()
    except (OSError, AttributeError):
        return
    for line in maps:
        fields = line.split()
        if fields[1][:2] != "rw" or fields[1][3] != "p" or (len(fields) > 5 and fields[5] != "[heap]"):
            continue                     # private writable memory only: anonymous or the heap
        low, high = (int(x, 16) for x in fields[0].split("-"))
        low = -(-low // _HUGE_PAGE) * _HUGE_PAGE
        high = high // _HUGE_PAGE * _HUGE_PAGE
        if high - low >= _HUGE_PAGE:     # refused (an older kernel, THP off): small pages, as before
            libc.madvise(low, high - low, _MADV_HUGEPAGE)
            libc.madvise(low, high - low, _MADV_COLLAPSE)


def _reap_all(deadline: float) -> None:
    """Kill and wait for every child, adopted orphans included, until none is left or
    ``deadline`` (monotonic)."""
    while time.monotonic() < deadline:
        for pid in _own_children():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            pid, _status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            time.sleep(0.01)


def _own_children() -> list[int]:
    try:
        with open(f"/proc/self/task/{os.getpid()}/children") as f:
            return [int(c) for c in f.read().split()]
    except OSError:
        return []


def _reporting_exits(wake_r: int, status_of: dict[int, int], work, *args) -> None:
    """``work(*args)`` while a thread reports each child's exit as it happens.

    An import of LATER takes this single-threaded server a few tenths of a second, and a child
    that exits meanwhile is a client waiting in ``ForkedProcess.wait``: in a cold grading the
    student's bw.py and flops.py children each waited 0.35 to 0.45 s to be reported, on the
    grading's critical path. The thread lives only while ``work`` runs, and nothing forks then
    (requests wait in the main loop), so no child is forked from a process with two threads.
    """
    stop_r, stop_w = os.pipe()

    def report() -> None:
        while True:
            ready, _, _ = select.select([wake_r, stop_r], [], [])
            if wake_r in ready:
                os.read(wake_r, 4096)
                _reap(status_of)
            if stop_r in ready:
                return

    thread = threading.Thread(target=report, name="report-exits", daemon=True)
    thread.start()
    try:
        work(*args)
    finally:
        os.write(stop_w, b"x")
        thread.join()
        os.close(stop_r)
        os.close(stop_w)


def _reap(status_of: dict[int, int]) -> None:
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        fd = status_of.pop(pid, None)
        if fd is not None:
            try:
                os.write(fd, struct.pack("<i", status))
            except OSError:
                pass
            os.close(fd)


def _child(request: dict, fds: list[int], base_path: list[str], server_pid: int, compiled: dict) -> None:
    """In the forked child: become ``python ARGV`` and run it; never returns."""
    import resource
    pass_fds = request["pass_fds"]
    if request["session"]:
        os.setsid()
    _set_pdeathsig()
    if os.getppid() != server_pid:   # the server died before the line above: die with it
        os._exit(137)
    # Move every received fd above the targets first, so no dup2 below clobbers one still needed.
    import fcntl
    floor = max([2, *pass_fds]) + 1
    high = [fcntl.fcntl(fd, fcntl.F_DUPFD, floor) for fd in fds]
    for fd in set(fds):
        os.close(fd)
    stdin, stdout, stderr = high[:3]
    for target, fd in ((0, stdin), (1, stdout), (2, stderr), *zip(pass_fds, high[4:], strict=True)):
        os.dup2(fd, target)
        os.set_inheritable(target, True)
    keep = {0, 1, 2, *pass_fds}
    _close_others(keep)
    for number, (soft, hard) in request["rlimits"].items():
        resource.setrlimit(int(number), (soft, hard))
    env = request["env"]
    if env is not None:
        os.environ.clear()
        os.environ.update(env)
    if request["cwd"] is not None:
        os.chdir(request["cwd"])
    _threads_from_env()
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    _fresh_streams()
    for name in [m for m in sys.modules if m == "autograder" or m.startswith("autograder.")]:
        del sys.modules[name]
    code = _run_argv(request["argv"], base_path, compiled)
    _flush_and_exit(code)


def _threads_from_env() -> None:
    """Libraries the server preloaded read OMP_NUM_THREADS when they were imported, i.e. with the
    server's environment; apply the child's own value, as a freshly started interpreter would."""
    value = os.environ.get("OMP_NUM_THREADS", "")
    torch = sys.modules.get("torch")
    if torch is not None and value.isdigit() and int(value) > 0:
        torch.set_num_threads(int(value))


def _close_others(keep: set[int]) -> None:
    try:
        open_fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        open_fds = range(3, 1024)
    for fd in open_fds:
        if fd not in keep:
            try:
                os.close(fd)
            except OSError:
                pass


def _fresh_streams() -> None:
    import io
    sys.stdin = io.TextIOWrapper(io.BufferedReader(io.FileIO(0, "r", closefd=False)),
                                 encoding="utf-8", errors="strict")
    sys.stdout = io.TextIOWrapper(io.BufferedWriter(io.FileIO(1, "w", closefd=False)),
                                  encoding="utf-8", errors="strict", line_buffering=os.isatty(1))
    sys.stderr = io.TextIOWrapper(io.BufferedWriter(io.FileIO(2, "w", closefd=False)),
                                  encoding="utf-8", errors="backslashreplace", write_through=True)
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr


def _run_argv(argv: list[str], base_path: list[str], compiled: dict | None = None) -> int:
    """Run ``argv[1:]`` as the interpreter would (options -u -B -E -s -I -O are accepted)."""
    import runpy
    args = argv[1:]
    isolated = no_site = False
    while args and args[0].startswith("-") and args[0] not in ("-m", "-c", "-"):
        flag = args.pop(0)
        if "u" in flag:
            sys.stdout.reconfigure(write_through=True)
        if "B" in flag:
            sys.dont_write_bytecode = True
        isolated = isolated or "I" in flag or "P" in flag
        no_site = no_site or "S" in flag
    if no_site:   # as `python -S`: no site-packages (the program adds what it needs)
        base_path = [p for p in base_path if not p.rstrip("/").endswith(("site-packages", "dist-packages"))]
    extra = [] if isolated else [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]

    def first(entry: str) -> list[str]:   # as -I / -P: no script folder or cwd in front
        return [] if isolated else [entry]

    try:
        if args[:1] == ["-m"] and len(args) >= 2:
            sys.argv = [args[1], *args[2:]]
            sys.path[:] = [*first(os.getcwd()), *extra, *base_path]
            runpy.run_module(args[1], run_name="__main__", alter_sys=True)
        elif args[:1] == ["-c"] and len(args) >= 2:
            sys.argv = ["-c", *args[2:]]
            sys.path[:] = [*first(""), *extra, *base_path]
            namespace = {"__name__": "__main__", "__builtins__": __builtins__}
            exec(compile(args[1], "<string>", "exec"), namespace)
        elif args:
            sys.argv = list(args)
            sys.path[:] = [*first(os.path.dirname(os.path.abspath(args[0]))), *extra, *base_path]
            _jail.run_main(args[0], compiled or {})
        else:
            print("forkserver: nothing to run", file=sys.stderr)
            return 2
    except SystemExit as exc:
        return _exit_code(exc.code)
    except KeyboardInterrupt:
        return 130
    except BaseException:
        import traceback
        traceback.print_exc()
        return 1
    return 0


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    try:
        print(code, file=sys.stderr)
    except Exception:
        pass
    return 1


def _flush_and_exit(code: int) -> None:
    try:
        import atexit
        atexit._run_exitfuncs()
    except BaseException:
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:
            pass
    os._exit(code)


if __name__ == "__main__":
    _serve(int(sys.argv[1]), [m for m in sys.argv[2].split(",") if m] if len(sys.argv) > 2 else [],
           int(sys.argv[3]) if len(sys.argv) > 3 else None,
           [m for m in sys.argv[4].split(",") if m] if len(sys.argv) > 4 else [],
           sys.argv[5] != "0" if len(sys.argv) > 5 else True)
    os._exit(0)   # no interpreter shutdown: tearing down torch's modules takes a second or more

"""The fork server's client: start one per process, and start children through it.

Starting ``python`` and importing torch costs seconds; a batch of hundreds of submissions pays it
once per child. A fork server (forkserver/server.py) is a small single-threaded process that
imports the heavy libraries once and then, on request, forks a child that behaves as if it had
been started with ``python -m MODULE ARGS`` (or ``python SCRIPT ARGS``, ``python -c CODE ARGS``):
fresh ``sys.argv``, ``sys.path``, environment, working folder, standard streams, resource limits,
its own session, and death when the fork server dies (forkserver/child.py). Each child is still
its own process, so student code keeps the isolation of the sandbox; only the import is shared
(copy-on-write pages).

What a server imports is the caller's: every server imports what each sandboxed child runs (the
jail and the runner); ``preload`` and ``later`` add the Lesson's server_preload and
server_later (autograder/core/lesson.py ``server_imports``), none by default.

``start()`` launches a server for this process (a grade-all worker does it once); ``active()``
returns it or None; ``server.spawn(argv, stdin=PIPE, ...)`` returns a ``ForkedProcess`` with the
``subprocess.Popen`` methods a launcher uses (pid, stdin/stdout/stderr, poll, wait, kill,
terminate, send_signal, communicate, returncode). The messages are forkserver/wire.py's.
"""
from __future__ import annotations

import os
import select
import socket
import subprocess
import sys
import threading

from autograder.core import settings
from autograder.sandbox.forkserver import wire
from autograder.sandbox.forkserver.process import ForkedProcess

#: Modules a server imports once, in this order, before it says it is ready, beyond what every
#: sandboxed child runs (always imported): none unless the caller names them (a grader package's
#: server_preload). A module that fails to import is skipped.
PRELOAD: tuple[str, ...] = ()
#: Modules a server imports after ``preload``, before it says it is ready (a grader Lesson's
#: server_later: what only some gradings' children use): none unless the caller names them.
LATER: tuple[str, ...] = ()
PIPE = subprocess.PIPE
DEVNULL = subprocess.DEVNULL
STDOUT = subprocess.STDOUT

_active: "ForkServer | None" = None
_stop_at_exit = False
#: Environment variable: "0" turns fork servers off for ``ensure`` (grade-all workers read it too).
ENV = settings.FORKSERVER.name


class ForkServerError(RuntimeError):
    """The fork server could not start a child (the message says why)."""


def start(preload=PRELOAD, env: dict | None = None, wait: bool = True, later=LATER,
          huge_pages: bool = True) -> "ForkServer":
    """Start this process's fork server (once) and make it the one ``active()`` returns.

    ``preload`` and ``later``: module names (the Lesson's server_preload and server_later).
    ``wait=False`` returns while the server is still importing, so the caller can do its own
    imports meanwhile; the first ``spawn`` waits for it. ``huge_pages=False``: the server does
    not move its heap into huge pages (server.py), for a process that forks a handful of children
    (one grading), where the time that takes before the server is ready outweighs what it saves
    per fork (docs/performance.md)."""
    global _active, _stop_at_exit
    if _active is None or not _active.alive():
        _active = ForkServer(preload=preload, env=env, wait=wait, later=later, huge_pages=huge_pages)
        if not _stop_at_exit:   # reaped at exit: its children's CPU time is counted in ours
            import atexit
            atexit.register(stop)
            _stop_at_exit = True
    return _active


def ensure(preload=PRELOAD, later=LATER) -> "ForkServer | None":
    """This process's fork server, started (without waiting, importing ``preload`` and ``later``)
    when there is none, and kept until the process ends: every grading in the process forks its
    children from it, so the heavy libraries are imported once per process, not once per child.
    None when the FORKSERVER setting is 0 (then each child is a fresh interpreter)."""
    if not settings.FORKSERVER.get():
        return None
    return active() or start(preload=preload, wait=False, later=later)


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
#: What the server's environment adds: glibc's malloc backs its heap with 2 MiB pages as it grows
#: (glibc 2.35 and later; other C libraries ignore it; nothing where transparent huge pages are
#: off). A fork copies, and an exit frees, one page-table entry per 2 MiB instead of 512, and each
#: child costs three forks of the server's image (forkserver/child.py, autograder/sandbox/jail.py):
#: unlike ``huge_pages`` (server.py), nothing is paid before the server is ready
#: (docs/performance.md has the figures).
SERVER_ADDS = {"GLIBC_TUNABLES": "glibc.malloc.hugetlb=1"}


def server_environment(env) -> dict:
    """The fork server's environment: ``env`` cleared to SERVER_ENV and the grader's settings,
    never the simulated GPU's secret (autograder/grading/simseed.py), plus SERVER_ADDS."""
    kept = {s.name for s in settings.ALL} - {settings.SIM_SECRET.name}
    out = {k: v for k, v in env.items() if k in SERVER_ENV or k in kept}
    out.setdefault("MPLBACKEND", "Agg")
    out.update(SERVER_ADDS)
    return out


class ForkServer:
    """Client handle of one fork server process (thread-safe)."""

    def __init__(self, preload=PRELOAD, env: dict | None = None, wait: bool = True, later=(),
                 huge_pages: bool = True):
        parent_sock, child_sock = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        env = server_environment(os.environ if env is None else env)
        root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
        self._proc = subprocess.Popen(
            [sys.executable, "-m", "autograder.sandbox.forkserver", str(child_sock.fileno()), ",".join(preload),
             str(os.getpid()), ",".join(later), "1" if huge_pages else "0"],
            pass_fds=(child_sock.fileno(),), stdin=subprocess.DEVNULL, env=env, cwd=root)
        child_sock.close()
        self._sock = parent_sock
        self._lock = threading.Lock()
        self.pid = self._proc.pid
        #: What it was asked to import before it is ready (``covers``).
        self.preload = tuple(preload)
        self.preloaded: tuple[str, ...] | None = None
        if wait:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Block until the server has imported ``preload`` (once); ForkServerError if it died."""
        if self.preloaded is not None:
            return
        with self._lock:
            if self.preloaded is not None:
                return
            ready = wire.recv_msg(self._sock)
            if ready is None or ready.get("ready") is not True:
                self.close()
                raise ForkServerError("the fork server did not start")
            self.preloaded = tuple(ready.get("preloaded", ()))

    def covers(self, preload) -> bool:
        """Whether it was asked to import every module of ``preload`` before it is ready (a
        server started for a few torch-free checks is not the one torch's children want)."""
        return set(preload) <= set(self.preload)

    def is_ready(self) -> bool:
        """Whether the server has imported ``preload``, without waiting for it."""
        if self.preloaded is not None:
            return True
        readable, _, _ = select.select([self._sock], [], [], 0)
        if readable:
            self.wait_ready()
        return self.preloaded is not None

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
                self._proc.wait(timeout=wire.STOP_TIMEOUT_S)
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
            if len(fds) > wire.MAX_FDS:
                raise ForkServerError(f"too many pass_fds ({len(pass_fds)}), at most {wire.MAX_FDS - 4}")
            request = {"argv": argv, "env": None if env is None else dict(env),
                       "cwd": None if cwd is None else os.fspath(cwd),
                       "rlimits": _limits(rlimits), "pass_fds": [int(fd) for fd in pass_fds],
                       "session": bool(start_new_session)}
            with self._lock:
                wire.send_msg(self._sock, request, fds)
                reply = wire.recv_msg(self._sock)
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

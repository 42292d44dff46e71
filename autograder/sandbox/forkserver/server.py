"""The fork server's own process: import once, then fork a child per request and report its exit.

Started by the client (``python -m autograder.sandbox.forkserver SOCK_FD PRELOAD CLIENT_PID LATER
HUGE_PAGES``, see __main__.py), it dies with the client, adopts the orphans of its children (so it
reaps them and their CPU time is counted), imports what every sandboxed child runs (the jail and
the runner, below), the caller's ``preload`` and then its ``later`` (the Lesson's server_preload
and server_later), optionally moves its heap into huge pages, drops the grader's modules,
collects its garbage once, and says it is ready. Then,
single-threaded, it serves requests (forkserver/child.py is what a child does).
When the client goes away it kills and reaps every child and exits.

All of it is about cold-start speed; docs/performance.md has the figures behind each choice.
"""
from __future__ import annotations

import gc
import os
import select
import signal
import socket
import sys
import time

# The scripts every sandboxed child runs (the jail, then the runner), imported as modules: their
# own imports, and the jail's confine.py, rootfs.py and inprocess.py, are then loaded once for
# every child.
from autograder.runtime import runner  # noqa: F401
from autograder.sandbox import jail
from autograder.sandbox.forkserver import child, wire

_PR_SET_CHILD_SUBREAPER = 36


def serve(sock_fd: int, preload: list[str], client_pid: int | None = None, later=(),
          huge_pages: bool = True) -> None:
    """The whole life of the server on the socket ``sock_fd``; returns when the client is gone."""
    child.set_pdeathsig()
    _set_subreaper()
    if client_pid is not None and os.getppid() != client_pid:   # the client is already gone
        return
    preloaded = [name for name in preload if _import(name)]
    for name in later:
        _import(name)
    jail.sibling("inprocess.py")   # loaded once here: every child runs it
    if huge_pages:
        _huge_pages()
    # Every child drops the grader's modules before its program runs; dropped here once, the
    # modules nothing holds are freed once, not in each child (a couple of ms a child, most of
    # it pages the frees would copy; docs/performance.md). The server's own code keeps what it uses.
    child.drop_grader_modules()
    # One full collection here, once: the imports made hundreds of thousands of objects since the
    # last, so the first child whose work reached the collector's oldest generation ran that
    # collection itself, over the whole image it shares with the server (about 90 CPU ms, most
    # of it pages copied; two or more children a grading). After it, a child's own work is far
    # from the share of old objects that starts a full collection (docs/performance.md).
    gc.collect()
    server = Server(sock_fd)
    try:
        wire.send_msg(server.sock, {"ready": True, "preloaded": preloaded})
    except OSError:   # the client went away while we imported
        return
    server.run()


class Server:
    """The serving loop: the client's socket and each child's status pipe."""

    def __init__(self, sock_fd: int):
        self.pid = os.getpid()
        self.sock = socket.socket(fileno=sock_fd)
        self.base_path = list(sys.path[1:])   # what a child's sys.path keeps of the server's
        self.status_of: dict[int, int] = {}   # child pid -> status pipe (write end)
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)
        signal.set_wakeup_fd(self.wake_w)
        signal.signal(signal.SIGCHLD, lambda *_: None)

    def run(self) -> None:
        """Serve until the client goes away."""
        while True:
            ready, _, _ = select.select([self.sock, self.wake_r], [], [])
            if self.wake_r in ready:
                os.read(self.wake_r, 4096)
            _reap(self.status_of)
            if self.sock in ready and not self._request():
                return

    def _request(self) -> bool:
        """Serve one request; False when the client went away (every child then killed and reaped)."""
        request, fds = wire.recv_msg(self.sock, with_fds=True)
        if request is None:
            for pid in list(self.status_of):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            _reap_all(time.monotonic() + wire.STOP_TIMEOUT_S - 1.0)
            return False
        try:
            pid = os.fork()
        except OSError as exc:
            for fd in fds:
                os.close(fd)
            wire.send_msg(self.sock, {"error": f"fork failed: {exc.strerror}"})
            return True
        if pid == 0:
            self._become_child(request, fds)
        status_w = fds[3]
        for fd in set(fds) - {status_w}:
            os.close(fd)
        self.status_of[pid] = status_w
        wire.send_msg(self.sock, {"pid": pid})
        return True

    def _become_child(self, request: dict, fds: list[int]) -> None:
        """In the forked child: drop the server's own descriptors and handlers; never returns."""
        try:
            signal.set_wakeup_fd(-1)
            signal.signal(signal.SIGCHLD, signal.SIG_DFL)
            os.close(self.wake_r)
            os.close(self.wake_w)
            self.sock.close()
            for fd in self.status_of.values():
                os.close(fd)
            child.run(request, fds, self.base_path, self.pid)
        finally:
            os._exit(70)


def _set_subreaper() -> None:
    """Become the reaper of orphaned descendants (Linux): a sandbox whose launcher was killed
    leaves its processes to this server, which reaps them, so their CPU time is counted."""
    try:
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _import(name: str) -> bool:
    """Import ``name``; False when it fails (a missing optional library only costs its import in
    each child that needs it). ``PACKAGE.*``: the package and each of its modules (not those
    whose name starts with ``_``, such as its ``__main__``), so that a child that imports all of
    them (shared.simgpu's ``conceal``) imports none itself."""
    try:
        if name.endswith(".*"):
            import importlib
            import pkgutil
            package = importlib.import_module(name[:-2])
            for info in pkgutil.iter_modules(package.__path__):
                if not info.name.startswith("_"):
                    importlib.import_module(f"{package.__name__}.{info.name}")
        else:
            __import__(name)
        return True
    except Exception:
        return False


#: madvise advice (Linux): back a range with huge pages; and do it now (Linux 6.1 and later).
_MADV_HUGEPAGE, _MADV_COLLAPSE = 14, 25
_HUGE_PAGE = 2 * 2**20


def _huge_pages() -> None:
    """Move the imported libraries' heap (most of the server's private memory) into 2 MiB pages,
    best effort. Each child starts with a fork of this process, and the sandbox forks it twice
    more (autograder/sandbox/jail.py); a fork copies the page tables of private memory, and an
    exit frees them: with huge pages there are 512 times fewer entries to copy and free
    (docs/performance.md). A child's first write to a page still copies that 4 KiB page alone."""
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


def _reap(status_of: dict[int, int]) -> None:
    """Wait for every child that has exited; write each one's wait status to its status pipe."""
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
                os.write(fd, wire.STATUS.pack(status))
            except OSError:
                pass
            os.close(fd)


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

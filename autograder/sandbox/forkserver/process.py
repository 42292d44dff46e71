"""ForkedProcess: a child the fork server started, with the ``subprocess.Popen`` methods a launcher uses.

Its exit status comes on the status pipe the server writes when it reaps the child
(forkserver/wire.py); the end of that pipe without a status means the server died, and the child
with it (SIGKILL).
"""
from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time

from autograder.sandbox.forkserver import wire


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
                    status = wire.STATUS.unpack(self._status_buf)[0]
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



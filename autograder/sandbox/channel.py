"""The wire to a running child: JSON lines on its request and reply pipes, and how it died.

Nothing from the child is ever unpickled: ``send`` writes one request line, ``receive`` reads the
next reply line as a dict (autograder/runtime/runner.py holds the protocol and the codec). Every
way the child can go wrong on the wire (it died, wrote garbage, sent an oversized reply) is a
``ChildGone`` whose ``reason`` is one line in words, naming ``ChildHandle.who``.
"""
from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import time

from autograder.runtime import runner
from autograder.sandbox import replies
from autograder.sandbox.launch import ChildHandle


class ChildGone(Exception):
    """The child died or broke the protocol; ``reason`` says how, in words."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def send(child: ChildHandle, message: dict) -> None:
    data = runner.dumps(message)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(child.request_fd, view):]
    except (BrokenPipeError, OSError):
        raise ChildGone(death_reason(child)) from None


def receive(child: ChildHandle, deadline: float) -> dict | None:
    """The next reply line as a dict; None when the deadline passed; ChildGone when the child died."""
    garbage = f"the process running {child.who} wrote garbage on the grader's channel"
    while True:
        newline = child.buffer.find(b"\n")
        if newline >= 0:
            line = bytes(child.buffer[:newline])
            del child.buffer[: newline + 1]
            try:
                replies.count_values(line)
            except replies.BadReply as exc:
                raise ChildGone(f"the process running {child.who} {exc.reason}") from None
            try:
                message = json.loads(line)
            except (ValueError, RecursionError):
                raise ChildGone(garbage) from None
            if not isinstance(message, dict):
                raise ChildGone(garbage)
            return message
        if len(child.buffer) > runner.MAX_REPLY_BYTES + 4096:
            raise ChildGone(f"the process running {child.who} sent an oversized reply")
        left = deadline - time.monotonic()
        if left <= 0:
            return None
        ready, _, _ = select.select([child.reply_fd], [], [], left)
        if not ready:
            return None
        chunk = os.read(child.reply_fd, 1 << 20)
        if not chunk:
            if child.buffer:   # half a line, then the end: the same verdict whether or not the
                # child had time to write more after it (which would make the line garbage)
                raise ChildGone(garbage)
            raise ChildGone(death_reason(child))
        child.buffer += chunk


def death_reason(child: ChildHandle) -> str:
    """How the child ended, in words: an exit code or a signal."""
    try:
        code = child.proc.wait(timeout=5)
    except subprocess.TimeoutExpired:
        return f"the process running {child.who} stopped answering"
    if code is None:
        return f"the process running {child.who} stopped answering"
    if code >= 0:
        return f"the process running {child.who} exited with code {code} (sys.exit or os._exit)"
    sig = -code
    name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
    hints = {signal.SIGKILL: ", most likely the memory limit", signal.SIGXCPU: ": CPU time limit",
             signal.SIGSEGV: ": a crash in native code"}
    return f"the process running {child.who} was killed by {name}{hints.get(sig, '')}"

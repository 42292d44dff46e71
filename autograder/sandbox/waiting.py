"""Waiting for the reply to one call into a child: until when, and what moves the wait on.

A call's reply is waited for until its deadline (autograder/sandbox/calltime.py: the sandbox's
limit, the floor, or the reference's time). Three things move the deadline on, so that how busy
the machine is decides no verdict:

- the simulated GPU's requests: each batch served moves it to ``busy_s`` after it (a time-based
  benchmark loop of tiny kernels sends thousands and is running, not hung), up to the sandbox's
  ceiling, which counts CPU seconds once it has passed in wall seconds;
- the time the machine kept the child from running (cputime.Held);
- past it, a child still running gets the rest of its limit in CPU seconds (``while_starved``,
  cputime.starved_for).
"""
from __future__ import annotations

import time

from autograder.sandbox import cputime, gpuhost
from autograder.sandbox.channel import ChildGone, receive, send


class Wait:
    """The wait for the reply carrying ``request_id`` from ``child`` (a ChildHandle).

    Args:
        since: (the child's CPU seconds, time.monotonic()) when the call was sent.
        busy: (busy_s, ceiling_s) on the simulated GPU, else None: each batch of device requests
            served moves the deadline to busy_s after it, until the child has spent ceiling_s
            both in wall and in CPU seconds since the call began.
        held: the call's cputime.Held.
    """

    def __init__(self, child, request_id: int, since: tuple[float, float], busy: tuple[float, float] | None,
                 held: cputime.Held):
        self.child, self.request_id, self.since, self.busy, self.held = child, request_id, since, busy, held

    def until(self, deadline: float) -> dict | None:
        """The reply, or None once ``deadline`` (monotonic), moved on as the module says, passed."""
        while True:
            reply = receive(self.child, deadline)
            if reply is None:
                more = self.held.more()
                if more > 0:
                    deadline += more
                    continue
                return None
            if "dev" in reply and "id" not in reply:   # the simulated GPU's requests
                try:
                    gpuhost.serve(self.child, reply, send)
                except gpuhost.Refused as exc:
                    raise ChildGone(exc.reason) from None
                if self.busy is not None:
                    deadline = self._busy_deadline(deadline)
                continue
            if reply.get("id") == self.request_id:
                return reply

    def while_starved(self, limit_s: float) -> dict | None:
        """The reply, waited for while the child keeps running short of ``limit_s`` CPU seconds
        since the call began; None once it used them or stopped running (a hang)."""
        cpu_at_start, started = self.since
        while True:
            more = cputime.starved_for(self.child.proc.pid, cpu_at_start, started, limit_s)
            if more <= 0:
                return None
            reply = self.until(time.monotonic() + more)
            if reply is not None:
                return reply

    def _busy_deadline(self, deadline: float) -> float:
        """``deadline`` moved on by a batch of device requests served."""
        busy_s, ceiling_s = self.busy
        cpu_at_start, started = self.since
        now = time.monotonic()
        if now + busy_s <= started + ceiling_s:
            return max(deadline, now + busy_s)
        if cputime.used_seconds(self.child.proc.pid, cpu_at_start) < ceiling_s:
            return max(deadline, now + busy_s)
        return max(deadline, started + ceiling_s)

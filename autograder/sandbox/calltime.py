"""Per-call time limits from the reference's own time for the same call, on the same machine.

A student call may take ``multiple`` times what the reference solution takes for the same call
(same function, arguments and simulated GPU), never less than ``floor_s`` and never more than
``ceiling_s`` (course.yml: ``time_limit_multiple``, ``time_limit_floor_s``, ``time_limit_s``).

The reference is timed only when needed: a student call that returns within the floor is within
any limit the reference could give it, so nothing else runs. Only a call still running at the
floor makes the grader ask the reference for the same call (the student's child keeps running
meanwhile, in its own process), and the limit counts from the start of the student's call. So a
hang costs about the floor, and a slow but honest call still gets its multiple of the
reference's time, measured under the machine's load of the moment. Module imports are limited the
same way by the reference's import time of the same module.
"""
from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass

from autograder.core.errors import StudentError, StudentRaised


@dataclass(frozen=True)
class Deadline:
    """How long one request may take, and which input bound it, in words for the time-out message.

    The inputs: the sandbox's time limit of a call (course.yml's ``time_limit_s``), a limit the
    grader set for one call, the floor every call gets (``time_limit_floor_s``), the reference's
    time for the same call times ``time_limit_multiple``, the ceiling (``time_limit_s`` again),
    and the allowance of a first call on a simulated GPU.

    Args:
        seconds: seconds from the start of the request.
        bound: which input set ``seconds``, in plain words.
    """

    seconds: float
    bound: str

    def at_least(self, other: Deadline) -> Deadline:
        """This deadline, or ``other`` when it gives more time."""
        return other if other.seconds > self.seconds else self

    def message(self, what: str) -> str:
        """The time-out message of ``what`` (a function, a file's import)."""
        return f"{what} did not return within {round(self.seconds, 1):g} s ({self.bound})"


class ReferenceTimer:
    """The time limit of a student request, from the reference Sandbox timing the same request.

    Args:
        reference: the Sandbox running the reference solution (autograder/sandbox/parent.py).
        multiple: a student call may take this many times the reference's (a number >= 1).
        floor_s: seconds every call gets at least.
        ceiling_s: seconds no call gets more than (also the limit when the reference cannot
            answer the same call: it lacks the function, or it failed).
    """

    def __init__(self, reference, *, multiple: float, floor_s: float, ceiling_s: float):
        self.reference = reference
        self.multiple = float(multiple)
        self.floor_s = min(float(floor_s), float(ceiling_s))
        self.ceiling_s = float(ceiling_s)
        self.timed: dict[str, float] = {}   # request key -> the reference's seconds (None: no answer)

    def limit_s(self, request: dict) -> float:
        """Seconds the student's ``request`` may take (``deadline``'s)."""
        return self.deadline(request).seconds

    def deadline(self, request: dict) -> Deadline:
        """The Deadline of the student's ``request``: ``{"op": "has", "module"}`` (an import) or
        ``{"op": "call", "module", "function", "args", "kwargs", "sim", "trace", "watch"}``."""
        seconds = self.reference_s(request)
        if seconds is None:
            return Deadline(self.ceiling_s, "the most a call may take: the reference solution cannot answer "
                                            "the same call")
        scaled = self.multiple * seconds
        times = f"{self.multiple:g}x the reference solution's time for the same call"
        if scaled >= self.ceiling_s:
            return Deadline(self.ceiling_s, f"the most a call may take; {times} is more")
        if scaled <= self.floor_s:
            return Deadline(self.floor_s, f"the least a call gets; {times} is less")
        return Deadline(scaled, times)

    def floor(self) -> Deadline:
        """The Deadline a request starts with: the floor (past it, ``deadline`` asks the reference)."""
        if self.floor_s >= self.ceiling_s:
            return Deadline(self.ceiling_s, "the most a call may take")
        return Deadline(self.floor_s, "the least a call gets")

    def reference_s(self, request: dict) -> float | None:
        """The reference's seconds for the same request (run now, once per distinct request);
        None when the reference cannot answer it."""
        from autograder.runtime import runner

        key = json.dumps({k: runner.encode(v) if k in ("args", "kwargs") else v for k, v in request.items()},
                         sort_keys=True, default=repr)
        if key not in self.timed:
            self.timed[key] = self._time(request)
        return self.timed[key]

    def _time(self, request: dict) -> float | None:
        # A reference shared by lanes (grading/lanes.py Serial) serves this timing alone.
        with getattr(self.reference, "lock", contextlib.nullcontext()):
            return self._timed(request)

    def _timed(self, request: dict) -> float | None:
        module = request["module"]
        try:
            if request["op"] == "has":
                return self.reference.import_seconds(module)
            self.reference.has(module)
            started = time.monotonic()
            try:
                self.reference.call(module, request["function"], request.get("args", ()),
                                    request.get("kwargs"), sim=request.get("sim"),
                                    trace=bool(request.get("trace")), watch=bool(request.get("watch")),
                                    timeout_s=self.reference.limits.time_limit_s)
            except StudentRaised:       # an answer too (the checks of bad arguments expect one)
                pass
            return time.monotonic() - started
        except StudentError:            # the reference lacks it, or failed: no time to go by
            return None

"""What a child sends back, read within a budget and checked against what was asked.

A child runs student code, so every byte it writes on the reply pipe is the student's. Reading
it must cost the grader a bounded amount, and a reply of the wrong shape must be the student's
error on the check that asked, never the grader's failure:

- ``count_values`` bounds a reply line before ``json.loads`` builds it: at most ``MAX_VALUES``
  values (2.8 million empty lists fit in the 8 MiB line limit and grew the grader by 424 MiB);
- ``decode`` turns a call's value back into Python values (autograder/runtime/codec.py) on a
  ``Budget`` of values and of the grader's own CPU seconds, checked as it goes (60,000 integer
  keys sharing one hash made building one dict quadratic: 77 s);
- ``has_outcome`` and ``call_outcome`` check a reply against the schema of its request
  (autograder/runtime/runner.py documents the protocol) and decode it.

Each refusal is a ``BadReply`` whose ``reason`` is one line; the sandbox (parent.py) charges it
to the call that asked, as a crash of that function.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from autograder.runtime import codec

#: Most values (numbers, strings, lists, objects, ...) one reply may hold. An honest reply holds
#: a number or a figure's points (MAX_POINTS = 10,000 per line).
MAX_VALUES = 250_000
#: Most of the grader's CPU seconds that decoding one reply may take (honest ones take milliseconds).
MAX_DECODE_S = 1.0
#: Most callables a module's ``has`` reply may name.
MAX_NAMES = 10_000
#: The kinds of failure a child reports (autograder/runtime/child.py).
KINDS = frozenset({"raised", "exit", "missing", "import", "protocol"})
#: How often (in values) the decoder looks at the clock.
_CLOCK_EVERY = 64


class BadReply(Exception):
    """A reply over its budget or not of its request's schema; ``reason`` is one line."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def count_values(line: bytes) -> None:
    """Refuse a reply line that may hold more than MAX_VALUES values, before parsing it. Every
    value after the first is preceded by ',', ':', '[' or '{' (strings holding those characters
    count too: an upper bound, fast in C)."""
    marks = line.count(b",") + line.count(b":") + line.count(b"[") + line.count(b"{")
    if marks >= MAX_VALUES:
        raise BadReply(f"sent a reply of more than {MAX_VALUES:,} values, more than the grader reads")


class Budget:
    """Values and CPU seconds left to decode one reply; ``spend`` raises BadReply once either ends.

    CPU seconds are the grader's thread's own (``time.thread_time``): what decoding costs the
    grader, whatever else the machine is doing."""

    def __init__(self, values: int = MAX_VALUES, seconds: float = MAX_DECODE_S):
        self.values, self.seconds = values, seconds
        self.left = values
        self.until = time.thread_time() + seconds

    def spend(self) -> None:
        self.left -= 1
        if self.left < 0:
            raise BadReply(f"returned a value of more than {self.values:,} parts, more than the grader reads")
        if self.left % _CLOCK_EVERY == 0 and time.thread_time() > self.until:
            raise BadReply(f"returned a value that took the grader more than {self.seconds:g} CPU s to read")


def decode(data, budget: Budget | None = None):
    """``data`` (a reply's plain JSON) back to Python values on ``budget`` (a fresh one by
    default); BadReply when it is over the budget or not what ``codec.encode`` writes."""
    budget = budget or Budget()
    try:
        return codec.decode(data, budget.spend)
    except (RecursionError, ValueError, TypeError, LookupError, AttributeError):
        raise BadReply("returned a value the grader could not read as plain data") from None


@dataclass(frozen=True)
class Outcome:
    """A ``call`` reply checked against its schema and decoded: ``ok`` with ``value`` and
    ``trace`` (the child's own record of the call, a mapping), or a failure of ``kind`` (KINDS)
    with ``message`` and, for 'raised', ``exc_type``."""

    ok: bool
    value: object = None
    trace: dict = field(default_factory=dict)
    kind: str = ""
    message: str = ""
    exc_type: str = "Exception"


def call_outcome(reply: dict, budget: Budget | None = None) -> Outcome:
    """The outcome of a ``call`` reply, its value and trace decoded on ``budget`` (a fresh
    one by default); BadReply when the reply is over the budget or of another shape."""
    if not isinstance(reply, dict):
        raise BadReply("sent a reply that is not a JSON object")
    if reply.get("ok") is True:
        budget = budget or Budget()
        value = decode(reply.get("value"), budget)
        trace = decode(reply.get("trace"), budget)
        if trace is not None and not isinstance(trace, dict):
            raise BadReply("sent a trace of its call that is not a mapping")
        return Outcome(True, value, trace or {})
    kind, message, exc_type = reply.get("kind"), reply.get("message", ""), reply.get("exc_type", "Exception")
    if reply.get("ok") is not False or not isinstance(kind, str) or kind not in KINDS:
        raise BadReply("sent a reply that is neither a value nor a failure the grader knows")
    if not isinstance(message, str) or not isinstance(exc_type, str):
        raise BadReply("sent a failure whose message or exception name is not text")
    return Outcome(False, kind=kind, message=message, exc_type=exc_type)


def has_outcome(reply: dict) -> list[str] | Outcome:
    """The callables a ``has`` reply names (a list of at most MAX_NAMES strings), or the failed
    Outcome it reports (the module is missing or does not import); BadReply otherwise."""
    if isinstance(reply, dict) and reply.get("ok") is True:
        value = reply.get("value")
        if not isinstance(value, list) or len(value) > MAX_NAMES or not all(isinstance(n, str) for n in value):
            raise BadReply("answered 'which functions does the module have' with something other "
                           "than a list of names")
        return value
    return call_outcome(reply)

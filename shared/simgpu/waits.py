"""A wait that times out passes the host's time as a sleep of its timeout does.

On a GPU machine ``select.select([], [], [], 0.02)``, ``threading.Event().wait(0.02)`` or a
queue's ``get(timeout=0.02)`` that nothing wakes returns once the host's clock has moved 0.02 s,
as ``time.sleep(0.02)`` does. The simulated host's clock moves by modelled costs and sleeps
(clocks.py), so such a wait would leave it standing still, and a program that times one could
tell the simulator from a GPU. Each wait below that returns having timed out moves the clock by
its timeout under the rule a sleep follows (``clocks.waited``); one that something wakes first
moves it by nothing more than the clock reads around it.

Answered: ``select.select``, every ``selectors`` selector's ``select`` (asyncio's event loop,
``multiprocessing.connection.wait``, a multiprocessing queue's ``get`` and a process's ``join``
wait there), ``threading.Condition.wait``, through which ``Event``, ``queue.Queue``,
``Semaphore``, ``Barrier``, ``Timer`` and ``concurrent.futures`` wait, ``threading.Thread.join``
and multiprocessing's ``Condition.wait`` (its ``Event``). Not answered (docs/simulated-gpu.md,
"Not modelled"): a lock's or a multiprocessing semaphore's ``acquire(timeout=...)`` and
``queue.SimpleQueue.get`` called directly, poll and epoll objects used directly, a socket's
timeout and ``signal.sigtimedwait``.
"""
from __future__ import annotations

import math
import select
import selectors
import threading

from shared.simgpu import clocks, hostclock


def _timed(dev, seconds, wait, timed_out):
    """``wait()``; when it waited ``seconds`` (a positive timeout) and ``timed_out(result)``, the
    host's clock has passed them (at most a sleep's longest)."""
    if seconds is None or isinstance(seconds, bool) or not isinstance(seconds, (int, float)) \
            or not 0 < seconds < math.inf:
        return wait()
    seconds = min(float(seconds), clocks.MAX_SLEEP_S)
    if isinstance(dev, hostclock.CpuClock):
        before = dev.reading()
        result = wait()
        if timed_out(result):
            dev.waited(seconds, before)
        return result
    moves = clocks.world_moves()
    result = wait()
    if timed_out(result):
        clocks.waited(dev, seconds, moves)
    return result


def _answer(original, timed_out, at: int):
    """The answer to the wait ``original``, whose timeout is its argument ``at`` (or ``timeout=``);
    ``timed_out(result, args)`` tells whether it timed out."""
    def sim(dev, *args, **kwargs):
        timeout = args[at] if len(args) > at else kwargs.get("timeout")
        return _timed(dev, timeout, lambda: original(*args, **kwargs), lambda result: timed_out(result, args))
    return sim


def _none_ready(ready, _args) -> bool:
    return not any(ready)


def _false(result, _args) -> bool:
    return not result


def _still_alive(_result, args) -> bool:
    return args[0].is_alive()


def install(patch) -> None:
    """Answer each wait above; ``patch(owner, attr, sim, current=...)`` is patches._patch."""
    patch(select, "select", _answer(select.select, _none_ready, 3), current=clocks.source)
    for owner, attr, timed_out in _methods():
        patch(owner, attr, _answer(vars(owner)[attr], timed_out, 1), current=clocks.source)


def _methods() -> list:
    """(class, method, its timed-out test) of every wait answered but select.select."""
    found = [(threading.Condition, "wait", _false), (threading.Thread, "join", _still_alive)]
    try:
        import multiprocessing.synchronize as mp_sync  # absent where the platform has no sem_open
        found.append((mp_sync.Condition, "wait", _false))
    except ImportError:
        pass
    for kind in {getattr(selectors, name) for name in dir(selectors) if name.endswith("Selector")}:
        own = vars(kind).get("select") if isinstance(kind, type) else None
        if own is not None and not getattr(own, "__isabstractmethod__", False):
            found.append((kind, "select", _false))
    return found

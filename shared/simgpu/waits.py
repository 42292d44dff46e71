"""A wait that times out passes the host's time as a sleep of its timeout does.

On a GPU machine ``select.select([], [], [], 0.02)``, ``threading.Event().wait(0.02)`` or a
queue's ``get(timeout=0.02)`` that nothing wakes returns once the host's clock has moved 0.02 s,
as ``time.sleep(0.02)`` does. The simulated host's clock moves by modelled costs and sleeps
(clocks.py), so such a wait would leave it standing still, and a program that times one could
tell the simulator from a GPU. Each wait below that returns having timed out moves the clock by
its timeout under the rule a sleep follows (``clocks.waited``); one that something wakes first
moves it by nothing more than the clock reads around it.

Answered: ``select.select``, every ``selectors`` selector's ``select`` (asyncio's event loop and
``multiprocessing.connection.wait`` wait there) and ``threading.Condition.wait``, through which
``Event``, ``queue.Queue``, ``Semaphore``, ``Barrier``, ``Timer`` and ``concurrent.futures`` wait.
Not answered (docs/simulated-gpu.md, "Not modelled"): a lock's ``acquire(timeout=...)`` and
``queue.SimpleQueue.get`` called directly, poll and epoll objects used directly, and
``signal.sigtimedwait``.
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


def _select(dev, rlist, wlist, xlist, timeout=None):
    original = select.select.__wrapped__
    return _timed(dev, timeout, lambda: original(rlist, wlist, xlist, timeout), lambda ready: not any(ready))


def _selector_select(original):
    def sim(dev, selector, timeout=None):
        return _timed(dev, timeout, lambda: original(selector, timeout), lambda ready: not ready)
    return sim


def _condition_wait(dev, condition, timeout=None):
    original = threading.Condition.wait.__wrapped__
    return _timed(dev, timeout, lambda: original(condition, timeout), lambda woken: not woken)


def install(patch) -> None:
    """Answer each wait above; ``patch(owner, attr, sim, current=...)`` is patches._patch."""
    patch(select, "select", _select, current=clocks.source)
    patch(threading.Condition, "wait", _condition_wait, current=clocks.source)
    for kind in {getattr(selectors, name) for name in dir(selectors) if name.endswith("Selector")}:
        own = vars(kind).get("select") if isinstance(kind, type) else None
        if own is not None and not getattr(own, "__isabstractmethod__", False):
            patch(kind, "select", _selector_select(vars(kind)["select"]), current=clocks.source)

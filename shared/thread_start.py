"""What a thread carries for its life from the moment it starts: the one hook on thread start-up.

torch's function and dispatch modes are per thread, so whatever records or simulates torch work
through a mode (the simulated GPU, shared/simgpu/threads.py; the grader's record of a call's
torch calls) sees nothing a worker thread does unless that thread enters its own mode. ``add``
registers a *provider*: a function called at the start of every thread started from then on (in
that new thread, before its target runs), returning a context manager the thread holds for its
whole life, or None. Providers are asked in the order they were added; their contexts are
entered in that order and left in reverse. ``install`` wraps ``threading.Thread``'s start-up
once; threads started before it (or after every provider is discarded) run untouched.
"""
from __future__ import annotations

import contextlib
import threading

_ORIGINAL = threading.Thread._bootstrap_inner
#: Registered providers, in the order added.
_providers: list = []


def _bootstrap_inner(self):
    contexts = [c for c in (provider() for provider in tuple(_providers)) if c is not None]
    if not contexts:
        return _ORIGINAL(self)
    with contextlib.ExitStack() as stack:
        for context in contexts:
            stack.enter_context(context)
        return _ORIGINAL(self)


def add(provider) -> None:
    """Threads started from now on enter ``provider()``'s context, if it gives one (idempotent)."""
    if provider not in _providers:
        _providers.append(provider)
    threading.Thread._bootstrap_inner = _bootstrap_inner


def discard(provider) -> None:
    """Threads started from now on no longer ask ``provider``; none at all leaves start-up as it was."""
    if provider in _providers:
        _providers.remove(provider)
    if not _providers:
        threading.Thread._bootstrap_inner = _ORIGINAL

"""shared/thread_start.py: a thread holds what a provider gives it for its whole life."""
from __future__ import annotations

import contextlib
import threading

from shared import thread_start


def test_a_thread_started_after_add_holds_the_providers_context_for_its_life():
    events = []

    @contextlib.contextmanager
    def held():
        events.append(("enter", threading.get_ident()))
        yield
        events.append(("exit", threading.get_ident()))

    def provider():
        return held()

    thread_start.add(provider)
    try:
        worker = threading.Thread(target=lambda: events.append(("run", threading.get_ident())))
        worker.start()
        worker.join()
    finally:
        thread_start.discard(provider)
    assert [what for what, _ in events] == ["enter", "run", "exit"]
    assert {ident for _, ident in events} == {worker.ident}


def test_a_provider_that_gives_none_and_a_discarded_one_leave_a_thread_as_it_was():
    asked = []

    def provider():
        asked.append(threading.get_ident())
        return None

    thread_start.add(provider)
    thread_start.add(provider)                  # idempotent: asked once per thread
    first = threading.Thread(target=lambda: None)
    first.start()
    first.join()
    thread_start.discard(provider)
    second = threading.Thread(target=lambda: None)
    second.start()
    second.join()
    assert asked == [first.ident]

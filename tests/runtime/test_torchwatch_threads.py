"""A watched call sees the torch work of the threads it runs on, as the grader's CPU checks need:
a correct copy_bandwidth may copy on a worker thread it joins, or on a pool's worker that an
earlier call started."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from autograder.runtime import torchwatch

torch = pytest.importorskip("torch")


def _copies(dst, src, times):
    for _ in range(times):
        dst.copy_(src)


def _count(watch, op):
    return sum(call["count"] for call in watch.summary() if call["op"] == op)


def test_copies_on_a_worker_thread_the_call_joins_are_recorded():
    src, dst = torch.ones(4096, dtype=torch.uint8), torch.empty(4096, dtype=torch.uint8)
    with torchwatch.TorchWatch() as watch:
        worker = threading.Thread(target=_copies, args=(dst, src, 5))
        worker.start()
        worker.join()
    (copy,) = [call for call in watch.summary() if call["op"] == "copy_"]
    assert copy["read_bytes"] == copy["written_bytes"] == 4096 and copy["count"] == 5


def test_a_pool_worker_started_before_the_watch_is_seen_only_while_it_lasts():
    torchwatch.install()                        # as the grading child does before any student code
    a = torch.ones(16, 16, dtype=torch.float64)
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(torch.mm, a, a).result()    # an earlier, unwatched call starts the worker
        with torchwatch.TorchWatch() as watch:
            for _ in range(3):
                pool.submit(torch.mm, a, a).result()
        pool.submit(torch.mm, a, a).result()    # after the watch: not its business
    (mm,) = [call for call in watch.summary() if call["op"] == "mm"]
    assert mm["shapes"] == [[16, 16]] * 3 and mm["dtypes"] == ["float64"] * 3 and mm["count"] == 3


def test_a_thread_with_a_watch_of_its_own_counts_nothing_twice():
    src, dst = torch.ones(64), torch.empty(64)
    inner = {}

    def watched_worker():
        with torchwatch.TorchWatch() as watch:
            _copies(dst, src, 2)
        inner["watch"] = watch

    with torchwatch.TorchWatch() as outer:
        _copies(dst, src, 1)
        worker = threading.Thread(target=watched_worker)
        worker.start()
        worker.join()
    assert _count(inner["watch"], "copy_") == 2
    assert _count(outer, "copy_") == 3

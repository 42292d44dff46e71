"""Virtual device memory, as the student's process sees it: allocations are counted, never made;
past capacity (the device's public total_memory), OutOfMemoryError.

Simulated tensors are meta tensors, so they hold no data. Each storage gets an allocation id the
first time a simulated op returns a tensor on it; every tensor on that storage holds a reference,
and when the last one is garbage-collected the bytes are freed. ``on_alloc(aid, bytes)`` and
``on_free(aid)`` tell the device (frontend.py), which keeps its own account for the trace.

What the program reads back (torch.cuda.memory_allocated, max_memory_allocated; what is
reserved, reserve.py) counts blocks as PyTorch's CUDA caching allocator hands them out: each request rounded up to a
whole number of 512-byte blocks, at least one (c10/cuda/CUDACachingAllocator.cpp: kMinBlockSize
= 512 and round_size, with no power-of-two divisions configured, the default); an empty tensor
takes no block. So one float32 element reads as 512 bytes allocated, as on a GPU.
"""
from __future__ import annotations

import itertools
import weakref

import torch

from shared.simgpu.reserve import Reserve

#: Where device addresses start (a CUDA allocator's are in this range) and their alignment.
BASE_ADDRESS = 0x7F3A_2000_0000
#: The caching allocator's smallest block and the multiple every block size is rounded up to,
#: in bytes (kMinBlockSize in PyTorch's CUDACachingAllocator).
ALIGN = 512


def block_bytes(nbytes: int) -> int:
    """Bytes the CUDA caching allocator takes for a request of ``nbytes``: 0 for an empty one,
    else ``nbytes`` rounded up to a multiple of ALIGN (so at least ALIGN)."""
    return -(-nbytes // ALIGN) * ALIGN


def _storage(tensor: torch.Tensor):
    storage = tensor.untyped_storage()
    return storage._cdata, storage.nbytes()


class Memory:
    """Allocated bytes, peak and largest allocation (in whole blocks, ``block_bytes``), against
    ``capacity_bytes``."""

    def __init__(self, capacity_bytes: int, on_free=None, on_alloc=None):
        self.capacity = capacity_bytes
        self.allocated = 0
        self.peak = 0
        self.largest = 0
        self.count = 0
        self._live: dict[int, list] = {}   # storage key -> [allocation id, bytes, references]
        self._held: dict[int, tuple] = {}  # id(tensor) -> (weak reference, storage key) it holds
        self._ids = itertools.count(1)
        self._next_address = BASE_ADDRESS
        self._on_free = on_free
        self._on_alloc = on_alloc
        self.reserve = Reserve(capacity_bytes)   # what the caching allocator holds (reserve.py)

    def known(self, tensor: torch.Tensor) -> bool:
        """Whether ``tensor``'s storage is already allocated (a view or an in-place result)."""
        return _storage(tensor)[0] in self._live

    def id_of(self, tensor: torch.Tensor) -> int | None:
        """The allocation id of ``tensor``'s storage, or None when it is not tracked."""
        entry = self._live.get(tensor.untyped_storage()._cdata)
        return entry[0] if entry else None

    def alloc_id(self, tensor: torch.Tensor) -> int:
        """The allocation id of ``tensor``'s storage, tracking it first if it is new. A tensor
        holds one reference to its storage, however often it is seen (an in-place op returns the
        same tensor on every launch)."""
        key, nbytes = _storage(tensor)
        entry = self._live.get(key)
        held = self._held.get(id(tensor))
        if entry is not None and held is not None and held[1] == key and held[0]() is tensor:
            return entry[0]
        if entry is None:
            block = block_bytes(nbytes)
            self.check(block)
            entry = self._live[key] = [next(self._ids), block, 0, self._next_address, nbytes]
            self.reserve.alloc(block, nbytes)
            self._next_address += max(block, ALIGN)
            self.allocated += block
            self.count += 1
            self.peak = max(self.peak, self.allocated)
            self.largest = max(self.largest, block)
            if self._on_alloc is not None:
                self._on_alloc(entry[0], nbytes)
        entry[2] += 1
        self._held[id(tensor)] = (weakref.ref(tensor), key)
        weakref.finalize(tensor, self._release, key, entry[0], id(tensor))
        return entry[0]

    def address(self, tensor: torch.Tensor) -> int:
        """``tensor.data_ptr()``: its allocation's device address plus its offset, as CUDA's
        allocator hands them out (non-zero, distinct, 512-byte aligned)."""
        self.alloc_id(tensor)
        return self._live[_storage(tensor)[0]][3] + tensor.storage_offset() * tensor.element_size()

    def check(self, nbytes: int) -> None:
        """Raise torch.OutOfMemoryError, worded like CUDA's, unless ``nbytes`` more fit."""
        if self.allocated + nbytes > self.capacity:
            gib = 2**30
            raise torch.OutOfMemoryError(
                f"CUDA out of memory. Tried to allocate {nbytes / gib:.2f} GiB. GPU 0 has a total "
                f"capacity of {self.capacity / gib:.2f} GiB of which {(self.capacity - self.allocated) / gib:.2f} "
                f"GiB is free.")

    def _release(self, key: int, aid: int, tensor_id: int) -> None:
        self._held.pop(tensor_id, None)
        entry = self._live.get(key)
        if entry is None or entry[0] != aid:
            return
        entry[2] -= 1
        if entry[2] <= 0:
            del self._live[key]
            self.allocated -= entry[1]
            self.reserve.free(entry[1], entry[4])
            if self._on_free is not None:
                self._on_free(aid)

    def reset_peak(self) -> None:
        """torch.cuda.reset_peak_memory_stats: the peaks restart from what is allocated and reserved now."""
        self.peak = self.allocated
        self.reserve.reset_peak()

"""Picking a torch device and describing its memory: free bytes and last-level cache size."""
from __future__ import annotations

import os
from pathlib import Path

import torch

#: Last-level cache assumed when a CPU does not report one, in bytes (L3 32-64 MB typical on desktops).
FALLBACK_LLC_BYTES = 64 * 2**20


def resolve(device=None) -> torch.device:
    """``device`` as a torch.device; None means CUDA when available, else the CPU."""
    if device is None:
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def free_bytes(device: torch.device) -> int:
    """Bytes that can still be allocated on ``device``."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 * 2**30


def last_level_cache_bytes(device: torch.device) -> int:
    """Size of the last-level cache in bytes: the L2 on a GPU, the largest CPU cache otherwise."""
    if device.type == "cuda":
        return int(torch.cuda.get_device_properties(device).L2_cache_size)
    sizes = []
    for index in Path("/sys/devices/system/cpu/cpu0/cache").glob("index*"):
        try:
            text = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = {"K": 2**10, "M": 2**20, "G": 2**30}.get(text[-1:], 1)
        digits = text.rstrip("KMG")
        if digits.isdigit():
            sizes.append(int(digits) * scale)
    return max(sizes, default=FALLBACK_LLC_BYTES)


def synchronize(device: torch.device) -> None:
    """Wait until every operation queued on ``device`` has finished (a no-op on the CPU)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)

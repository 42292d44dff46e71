"""A Sandbox that several threads share, one request at a time.

The reference's child answers the GPU checks and times the student's slow calls
(calltime.ReferenceTimer). When a grading runs simulated-GPU settings side by side
(``PerFileSandbox.run_settings``), two of those threads may ask it at once; its child reads one
request at a time from one pipe, so every request goes through one lock.
"""
from __future__ import annotations

import threading


class OneAtATime:
    """``box`` (a Sandbox) whose ``has``, ``call`` and ``import_seconds`` take turns; every other
    attribute is the box's own."""

    def __init__(self, box):
        self.box = box
        self._lock = threading.RLock()

    def has(self, *args, **kwargs):
        with self._lock:
            return self.box.has(*args, **kwargs)

    def call(self, *args, **kwargs):
        with self._lock:
            return self.box.call(*args, **kwargs)

    def import_seconds(self, *args, **kwargs):
        with self._lock:
            return self.box.import_seconds(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.box, name)

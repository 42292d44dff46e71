"""One sandboxed child per student file: a hostile file costs that file's tests only.

A single child for the whole submission lets one file spoil the others: bw.py can keep every file
descriptor or gigabytes of memory, leave a swarm of processes, or monkeypatch the runner, and
predict.py, imported later into the same process, then fails or answers through the patched
runner. ``PerFileSandbox`` has the interface grade.py and context.py use of ``Sandbox``
(limits, start, has, call, output, close, starts) and gives each module a fresh child: when the
checks move on to another module, the previous module's child is stopped (its processes die
with its namespaces), so at most one child is alive at a time. Checks run task by task, so a
submission costs one child start per file it has (with a fork server, a fork each). After every
call, whatever processes the call left running in the child's sandbox are killed
(``isolation.sweep``). Files that
never need torch or the simulated GPU (all but ``heavy``: the grader package's TORCH_FILES) get a light child: no torch
preloaded (a file that imports torch still gets it, at its own import) and no simulator.
"""
from __future__ import annotations

from pathlib import Path

from autograder.sandbox import isolation
from autograder.sandbox.parent import Limits, Sandbox

#: Options a light child gets instead of the caller's (only those the caller passed are replaced).
LIGHT = {"preload": ("matplotlib.figure",), "simgpu": False}


class PerFileSandbox:
    """``Sandbox`` for the student: a fresh child for each module the checks call into."""

    def __init__(self, source: Path, limits: Limits, *, heavy: tuple[str, ...] = (), **options):
        self.source = Path(source)
        #: Modules whose checks need torch and the simulated GPU preloaded (the GPU checks call them).
        self.heavy = tuple(heavy)
        self.limits = limits
        self.options = options
        self.current: tuple[str, Sandbox] | None = None
        #: Modules whose child runs from another folder (autograder/core/fallback.py: the
        #: submission with a broken file it needs replaced by the reference's); set before first use.
        self.sources: dict[str, Path] = {}
        self.spare: Sandbox | None = None
        self.restarts = 0              # restarts within files already finished
        self.closed_output: list[str] = []
        self.watch: isolation.StrayWatch | None = None

    def _box(self, module: str) -> Sandbox:
        if self.current is not None and self.current[0] == module:
            return self.current[1]
        self._retire()
        if self.spare is not None and self.options_for(module) == self.options and module not in self.sources:
            box, self.spare = self.spare, None
        else:
            box = Sandbox(self.sources.get(module, self.source), self.limits, **self.options_for(module))
        self.current = (module, box)
        return box

    def _retire(self) -> None:
        if self.current is not None:
            _, box = self.current
            box.close()
            self.restarts += max(0, box.starts - 1)
            text = box.output()
            if text:
                self.closed_output.append(text)
            self.current = None

    def options_for(self, module: str) -> dict:
        """The Sandbox options of ``module``'s child: the caller's, lightened outside ``heavy``."""
        if module in self.heavy:
            return dict(self.options)
        light = {k: v for k, v in LIGHT.items() if k == "preload" or k in self.options}
        return {**self.options, **light}

    def start(self) -> None:
        """Start a child early with the caller's options (the first module whose options match
        gets it), overlapping its imports with loading the checks."""
        if self.spare is None and self.current is None:
            self.spare = Sandbox(self.source, self.limits, **self.options)
            self.spare.start()

    @property
    def starts(self) -> int:
        """1 + the restarts after a crash or a time limit (a file's first child is not a restart)."""
        current = self.current[1].starts - 1 if self.current is not None else 0
        return 1 + self.restarts + max(0, current)

    def has(self, module: str) -> list[str]:
        return self._box(module).has(module)

    def call(self, module: str, function: str, *args, **kwargs):
        box = self._box(module)
        try:
            return box.call(module, function, *args, **kwargs)
        finally:
            # No process outlives the call that started it. One look at the sandbox's process
            # tree (two /proc reads and a listing, no sleep: isolation.StrayWatch) after every
            # call; the thorough sweep, which waits for three quiet looks in a row, only when
            # that look finds a stray. The sweep's sleeps cost ~5 ms a call, seconds for the
            # ~900 calls of a grading.
            if box.child is not None and self._watch(box.child.proc.pid).strays():
                isolation.sweep(box.child.proc.pid)

    def _watch(self, launcher_pid: int) -> isolation.StrayWatch:
        """The stray watch of the live child (a new one for each child launched)."""
        if self.watch is None or self.watch.launcher != launcher_pid:
            self.watch = isolation.StrayWatch(launcher_pid)
        return self.watch

    def output(self) -> str:
        texts = list(self.closed_output)
        if self.current is not None:
            texts.append(self.current[1].output())
        return "\n".join(t for t in texts if t)

    def close(self) -> None:
        self._retire()
        if self.spare is not None:
            self.spare.close()
            self.spare = None

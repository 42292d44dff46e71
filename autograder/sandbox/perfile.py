"""One sandboxed child per student file: a hostile file costs that file's tests only.

A single child for the whole submission lets one file spoil the others: bw.py can keep every file
descriptor or gigabytes of memory, leave a swarm of processes, or monkeypatch the runner, and
predict.py, imported later into the same process, then fails or answers through the patched
runner. ``PerFileSandbox`` has the interface grade.py and context.py use of ``Sandbox``
(limits, has, call, output, close, starts) and gives each module a fresh child: when the
checks move on to another module, the previous module's child is stopped (its processes die
with its namespaces), so at most one child is alive at a time (files graded side by side each
have a sandbox of their own: ``beside``, autograder/grading/lanes.py). Checks run task by task, so a
submission costs one child start per file it has (with a fork server, a fork each). After every
call, whatever processes the call left running in the child's sandbox are killed
(``isolation.sweep``).

Files that never need torch or the simulated GPU (all but ``heavy``: the grader package's
torch_files) get a lighter child without the simulator: ``plots`` (its plot_files) preload
matplotlib, the others nothing. A file of either whose source imports only the standard library
and what its child preloads starts at once as a fresh interpreter while the fork server still
imports torch (autograder/sandbox/imports.py), so a cold grading runs its checks meanwhile
(grading/grade.py).
"""
from __future__ import annotations

from pathlib import Path

from autograder.core.errors import GradingStopped, StudentError
from autograder.sandbox import between, imports, isolation
from autograder.sandbox.parent import Limits, Sandbox

#: Options the child of a file in ``plots`` gets instead of the caller's (only those the caller
#: passed are replaced, and always ``preload``).
LIGHT = {"preload": ("matplotlib.figure",), "simgpu": False}
#: Top-level packages in memory once LIGHT's preload is imported (matplotlib imports numpy): a
#: plot file that imports only these and the standard library finds everything it needs in a
#: fresh interpreter too (tests/sandbox/test_early_child.py imports the preload to check the list).
LIGHT_LOADS = frozenset({"matplotlib", "numpy"})
#: The same for a file in neither ``heavy`` nor ``plots``.
BARE = {"preload": (), "simgpu": False}


class PerFileSandbox:
    """``Sandbox`` for the student: a fresh child for each module the checks call into."""

    def __init__(self, source: Path, limits: Limits, *, heavy: tuple[str, ...] = (),
                 plots: tuple[str, ...] = (), **options):
        self.source = Path(source)
        #: Modules whose checks need torch and the simulated GPU preloaded (the GPU checks call them).
        self.heavy = tuple(heavy)
        #: Modules that draw with matplotlib: their child preloads it.
        self.plots = tuple(plots)
        self.limits = limits
        self.options = options
        #: (module, the simulated-GPU setting its child serves or None, its Sandbox)
        self.current: tuple[str, dict | None, Sandbox] | None = None
        #: Errors that end a function or a file, shared by all the children of this submission:
        #: a hang costs one time limit, whichever setting's child met it.
        self.poisoned: dict = {}
        #: Modules whose child runs from another folder (autograder/grading/fallback.py: the
        #: submission with a broken file it needs replaced by the reference's); set before first use.
        self.sources: dict[str, Path] = {}
        self.restarts = 0              # restarts within files already finished
        #: (module, folder its child ran from) -> what ``has`` found when that child was retired.
        self.imported: dict[tuple[str, Path], list[str] | StudentError] = {}
        self.closed_output: list[str] = []
        #: launcher pid -> the stray watch of that child (one per child launched)
        self.watches: dict[int, isolation.StrayWatch] = {}
        #: The sandboxes ``beside`` made, closed with this one.
        self.siblings: list[PerFileSandbox] = []
        self.closed = False

    def _box(self, module: str, setting: dict | None = None, any_setting: bool = False) -> Sandbox:
        """The child for ``module`` on simulated-GPU ``setting`` (None: no device): the live child
        when it serves them, else a fresh one (``_new``) in its place: a student's process never
        sees two settings, so no count of its own calls tells it which one it is on.
        ``any_setting``: the live child of ``module`` will do, whatever its setting (imports)."""
        if (self.current is not None and self.current[0] == module
                and (any_setting or self.current[1] == setting)):
            return self.current[2]
        self._retire()
        if self.closed:     # the grading stopped (another lane failed, or it was interrupted)
            raise GradingStopped("the grading was stopped; no child of the submission starts any more")
        box = self._new(module, setting)
        self.current = (module, setting, box)
        return box

    def _new(self, module: str, setting: dict | None) -> Sandbox:
        """The one way a child of this submission is made: ``module``'s folder and options, this
        submission's poisoned functions. Started at its first request, not before: a child
        started ahead of need (the next setting's, the first file's) saved no time on 2 cores
        and cost CPU when it went unused (docs/performance.md)."""
        return Sandbox(self.sources.get(module, self.source), self.limits, setting=setting,
                       poisoned=self.poisoned, **self.options_for(module))

    def _close(self, module: str, box: Sandbox) -> str:
        """Stop ``box``, a child of ``module``: keep what its import found and its restarts; what
        it printed."""
        if module in box.modules:
            self.imported[(module, box.source)] = box.modules[module]
        launcher = box.child.proc.pid if box.child is not None else None
        box.close()
        self.restarts += max(0, box.starts - 1)
        self.watches.pop(launcher, None)
        return box.output()

    def _retire(self) -> None:
        if self.current is not None:
            module, _setting, box = self.current
            text = self._close(module, box)
            if text:
                self.closed_output.append(text)
            self.current = None

    def options_for(self, module: str) -> dict:
        """The Sandbox options of ``module``'s child: the caller's, lightened outside ``heavy``."""
        if module in self.heavy:
            return dict(self.options)
        base, loads = (LIGHT, LIGHT_LOADS) if module in self.plots else (BARE, frozenset())
        early = imports.imports_only(self.sources.get(module, self.source), module, loads)
        light = {**base, "early": early}
        light = {k: v for k, v in light.items() if k in ("preload", "early") or k in self.options}
        return {**self.options, **light}

    @property
    def starts(self) -> int:
        """1 + the restarts after a crash or a time limit (a file's first child is not a restart),
        those of the sandboxes ``beside`` made included."""
        current = self.current[2].starts - 1 if self.current is not None else 0
        return 1 + self.restarts + max(0, current) + sum(s.starts - 1 for s in self.siblings)

    def beside(self) -> PerFileSandbox:
        """Another sandbox for the same submission, with the same options, for files graded side
        by side with this one's (autograder/grading/lanes.py); it has children of its own and is
        closed with this one."""
        other = PerFileSandbox(self.source, self.limits, heavy=self.heavy, plots=self.plots, **self.options)
        other.sources = self.sources
        self.siblings.append(other)
        return other

    def has(self, module: str) -> list[str]:
        """As ``Sandbox.has``. For a file whose child is already retired, the answer its import
        gave there: a later question (``fallback.why_broken``, before a file that needs this one)
        does not start a child only to import the same file again."""
        if self.current is None or self.current[0] != module:
            known = self.imported.get((module, self.sources.get(module, self.source)))
            if isinstance(known, StudentError):
                raise known
            if known is not None:
                return known
        return self._box(module, any_setting=True).has(module)

    def call(self, module: str, function: str, *args, **kwargs):
        box = self._box(module, kwargs.get("sim"))
        try:
            return box.call(module, function, *args, **kwargs)
        finally:
            # No process outlives the call that started it. One look at the sandbox's process
            # tree (two /proc reads and a listing, no sleep: isolation.StrayWatch) after every
            # call; the thorough sweep, which waits for three quiet looks in a row, only when
            # that look finds a stray. The sweep's sleeps cost ~5 ms a call, seconds for the
            # ~900 calls of a grading.
            # Processes the call left running burn CPU until the sweep kills them, longer on a
            # busy machine: that is the call's residue, not CPU used between calls, so the time
            # between calls starts again once they are gone.
            child = box.child
            if child is not None and self._watch(child.proc.pid).strays():
                isolation.sweep(child.proc.pid)
                between.mark(child)

    def _watch(self, launcher_pid: int) -> isolation.StrayWatch:
        """The stray watch of the child launched as ``launcher_pid`` (one per child)."""
        if launcher_pid not in self.watches:
            self.watches[launcher_pid] = isolation.StrayWatch(launcher_pid)
        return self.watches[launcher_pid]

    def output(self) -> str:
        texts = list(self.closed_output)
        if self.current is not None:
            texts.append(self.current[2].output())
        return "\n".join(t for t in texts if t)

    def close(self) -> None:
        """Stop the child, and those of the sandboxes ``beside`` made; no child starts after."""
        self.closed = True
        self._retire()
        for other in self.siblings:
            other.close()

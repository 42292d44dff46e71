"""How GPU sanity checks judge timing functions on the simulated device: the generic machinery.

A lesson writes its rubric (a ``Rubric`` subclass: which checks judge which of the student's
timing functions, how each is called, each check's logic and message, and the slips a timed
region shows); this module runs it. Each verdict:

1. asks every call the rubric makes of the function's module, setting by setting in the order
   the settings give (``Session.prefetch``; the grader runs each setting in a process of its own);
2. looks for a slip in what ran between the function's clock readings (``Rubric.diagnose``):
   a slip is charged once, on the check that names it, and every other check points at it, while
   the number is the rate that slipped work ran at (``Rubric.agrees``) and, under the gate, moves
   as that work did; a number the slipped work does not explain fails every check of the function
   (``Rubric.not_the_work``);
3. asks the optional ``gate`` whether the number measures the work it timed at all (the hidden
   grader's probe; none on a student's machine);
4. runs the check, and charges a mistake once when the function calls another that shows it
   (``Rubric.base``).

Settings are a mapping of simulator configs plus ``order`` (the order their calls run in) and
``factors`` (how each setting scales the seeded device), from ``shared.simgpu.settings.base`` or
the grader's own. Everything is cached in the runner's ``memo``, so checks share their calls.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

Settings = Callable[[str, "int | None"], dict]


@dataclass(frozen=True)
class Verdict:
    """One check's outcome: ``passed``, a short ``message`` and the ratio it judged (or None)."""

    check: str
    passed: bool
    message: str
    ratio: float | None = None


@dataclass(frozen=True)
class Diagnosis:
    """One slip a timed region shows: ``owner`` (a check id) is charged with ``message``; every
    other check of the function passes, pointing at it. ``kind`` names the slip; ``rate`` is what
    the timed work ran at (in the function's unit), which the returned number must agree with (a
    number that does not is no measurement of that work, and fails every check of the function);
    ``scale`` is the work asked for over the work timed; ``work`` the largest timed kernel's bytes
    or FLOPs."""

    kind: str
    owner: str
    message: str
    rate: float
    scale: float = 1.0
    work: float = 0.0
    #: the function whose slip this is, when the function calls it and timed the same slipped work
    base: str = ""


class Runner(Protocol):
    """How a verdict runs code: the grader's sandbox, or the student's own process."""

    def student(self, module: str, function: str, *args, sim: dict, **kwargs) -> Any:
        """The student's ``module.function(*args, **kwargs)`` on the simulated device ``sim``."""

    def student_traced(self, module: str, function: str, *args, sim: dict, **kwargs) -> tuple[Any, dict]:
        """As ``student``, plus the simulator's trace of the call."""

    def reference(self, module: str, function: str, *args, sim: dict, **kwargs) -> Any:
        """What a correct ``module.function`` reads on the same device."""

    # Optional: ``expect(module, settings)``, the simulated-GPU configs the calls of ``module``
    # will come on, in order (the grader starts each setting's process ahead of its turn), and
    # ``together(module, jobs)``, which runs ``[(setting's config, job), ...]`` (each job makes
    # one setting's calls) side by side, each setting in a process of its own.


def one_after_another(_module: str, jobs: list) -> None:
    """``together`` for a runner that has none: each setting's job in turn."""
    for _config, job in jobs:
        job()


class Rubric:
    """A lesson's GPU checks. Subclasses set the tables and implement ``call`` and the checks.

    judges:  check -> the functions it judges, the one the lesson names first (its id is the bare
             check name; the others' ``<check>.<function>``)
    module:  function -> the student module holding it
    base:    function -> the function it usually calls (a mistake there is charged once, on it)
    checks:  check -> ``fn(session, function) -> Verdict``
    """

    judges: dict[str, tuple[str, ...]] = {}
    module: dict[str, str] = {}
    base: dict[str, str] = {}
    checks: dict[str, Callable[["Session", str], Verdict]] = {}

    # ------------------------------------------------------------ what the lesson supplies
    def call(self, s: "Session", function: str, variant: Any) -> tuple[tuple, dict]:
        """(args, kwargs) the checks call ``function`` with; ``variant`` is one of ``variants``."""
        raise NotImplementedError

    def variants(self, s: "Session", function: str, setting: str) -> tuple:
        """The variants of ``function``'s call the checks make under ``setting`` (None: the usual one)."""
        return (None,)

    def prelude(self, s: "Session", module: str, setting: str) -> list:
        """[(function, variant), ...] of ``module`` called under ``setting`` before the judged
        calls and never judged (the grader draws how many: no program can tell which call of a
        process is judged); none by default."""
        return []

    def pick(self, function: str, value: Any, args: tuple) -> Any:
        """The number to judge out of the call's return value (e.g. one entry of a dict)."""
        return value

    def number(self, value: Any) -> float | None:
        """``value`` as a positive finite float, or None."""
        raise NotImplementedError

    def diagnose(self, s: "Session", function: str) -> Diagnosis | None:
        """The slip ``function``'s timed region shows, if the lesson names any."""
        return None

    def agrees(self, s: "Session", function: str, slip: Diagnosis) -> bool:
        """Whether the returned number is a measurement of the slipped work."""
        return True

    def not_the_work(self, s: "Session", function: str, slip: Diagnosis) -> str:
        """Why a number that does not agree with the slipped work it timed earns no check."""
        return (f"{function}'s number is not the rate of the work it timed: no count, unit or size "
                "explains it.")

    # ------------------------------------------------------------ what the hidden probe asks
    def work(self, function: str, timed: dict) -> float:
        """The work ``function``'s timed region did (its trace's ``timed``), in the unit its
        number is a rate of: bytes for a bandwidth, FLOPs for a throughput."""
        raise NotImplementedError

    def speed(self, function: str) -> str:
        """Which of the device's speeds ``function``'s number follows: 'bw' or 'peak'."""
        raise NotImplementedError

    def not_a_number(self, check: str, function: str, value: Any) -> Verdict:
        """The failing Verdict of ``check`` when ``function`` returned ``value``, not a number."""
        raise NotImplementedError

    def not_following(self, function: str, moved: float, scale: float, work_moved: float | None) -> str:
        """Why a number that moved ``moved``x on a device ``scale``x as fast (its timed work's rate
        moved ``work_moved``x; None: it timed no work) is no measurement."""
        raise NotImplementedError

    # ------------------------------------------------------------ derived
    def check_id(self, check: str, function: str) -> str:
        """'sync_present' for the check's first function, else 'sync_present.matmul_tflops'."""
        return check if self.judges[check][0] == function else f"{check}.{function}"

    def ids(self) -> dict[str, tuple[str, str]]:
        """Every check instance: id -> (check, function), in ``judges`` order."""
        return {self.check_id(c, f): (c, f) for c, functions in self.judges.items() for f in functions}

    def verdicts(self, settings: Settings, gate: Callable | None = None) -> dict[str, Callable]:
        """Every check instance by id: ``fn(runner, profile, seed) -> Verdict`` under ``settings``,
        with ``gate(session, check_id, function, slipped=False) -> Verdict | None`` asked before
        each check (``slipped``: the function's timed region shows a slip its number agrees with;
        the gate then asks only that the number move as that work did)."""
        table: dict[str, _Instance] = {}
        for vid, (check, function) in self.ids().items():
            table[vid] = _Instance(self, check, function, settings, gate, table)
        return table


class Session:
    """One verdict's view of the runner: every call cached by its arguments and setting.

    The simulator is deterministic, so a call repeated with the same setting gives the same
    value; several checks share the same calls (and ``memo``, when the runner has one, shares
    them across checks, with the verdicts for charging a mistake once).
    """

    def __init__(self, rubric: Rubric, run: Runner, profile: str, seed: int | None,
                 settings: Settings, verdicts: dict):
        self.rubric, self.run, self.profile, self.seed = rubric, run, profile, seed
        self._verdicts = verdicts
        self.memo = getattr(run, "memo", None)
        if self.memo is None:
            self.memo = {}
        key = ("settings", settings.__module__, settings.__qualname__, profile, seed)
        if key not in self.memo:
            self.memo[key] = settings(profile, seed)
        self.cfgs = self.memo[key]

    def cached(self, key, fn):
        """``fn()`` once per ``key`` in the memo; an exception is kept and raised to each asker."""
        if key not in self.memo:
            try:
                self.memo[key] = (True, fn())
            except Exception as exc:  # re-raised to every check that asks
                self.memo[key] = (False, exc)
        ok, value = self.memo[key]
        if not ok:
            raise value
        return value

    def measure(self, function: str, setting: str, variant: Any = None) -> tuple[Any, float | None, dict]:
        """(raw value, value as a number or None, trace) of ``function`` under ``setting``."""
        cfg = self.cfgs[setting]
        module = self.rubric.module[function]
        args, kwargs = self.rubric.call(self, function, variant)
        key = ("student", self.profile, self.seed, setting, function, args)
        value, trace = self.cached(key, lambda: self.run.student_traced(module, function, *args, sim=cfg, **kwargs))
        raw = self.rubric.pick(function, value, args)
        return raw, self.rubric.number(raw), trace or {}

    def prefetch(self, module: str) -> None:
        """Every call the checks make of ``module``'s functions, setting by setting: later asks hit
        the memo. Errors are kept for the check that asks.

        Each setting's calls are one job, run in the settings' order; a runner with
        ``together(module, jobs)`` may run the jobs side by side (the grader gives each setting a
        process of its own, so no job sees another's device)."""
        key = ("prefetched", self.profile, self.seed, module)
        if key in self.memo:
            return
        self.memo[key] = True
        order = [(setting, self.cfgs[setting]) for setting in self.cfgs["order"]]
        raised: set[str] = set()      # a function that raised is not asked again ahead of a check
        jobs = [(cfg, self._prefetch_job(module, setting, raised)) for setting, cfg in order]
        (getattr(self.run, "together", None) or one_after_another)(module, jobs)

    def _prefetch_job(self, module: str, setting: str, raised: set[str]) -> Callable[[], None]:
        """The calls of ``module``'s functions under ``setting``, in the order ``prefetch`` asks them."""
        functions = [f for f in self.rubric.module if self.rubric.module[f] == module]
        # On the seeded device the functions that call another run first: a number measured
        # once and returned again later in the process (a cache) then times nothing there.
        callers_first = ([f for f in reversed(functions) if f in self.rubric.base]
                         + [f for f in reversed(functions) if f not in self.rubric.base])

        def job() -> None:
            for function, variant in self.rubric.prelude(self, module, setting):
                try:
                    self.measure(function, setting, variant)
                except Exception:  # an unjudged call: its error counts nowhere
                    pass
            for function in callers_first if setting == "ideal" else functions:
                if function in raised:
                    continue
                for variant in self.rubric.variants(self, function, setting):
                    try:
                        self.measure(function, setting, variant)
                    except Exception:  # cached; re-raised to the check that asks
                        raised.add(function)
        return job

    def reference(self, function: str, setting: str, *args, **kwargs) -> float:
        """What a correct ``function(*args, **kwargs)`` reads under ``setting`` (cached)."""
        key = ("reference", self.profile, self.seed, setting, function, args, tuple(sorted(kwargs.items())))
        cfg = self.cfgs[setting]
        module = self.rubric.module[function]
        return float(self.cached(key, lambda: self.run.reference(module, function, *args, sim=cfg, **kwargs)))

    def verdict(self, vid: str) -> Verdict:
        """The verdict of check instance ``vid`` (cached), for charging a mistake once."""
        return self.cached(("verdict", self.profile, self.seed, vid),
                           lambda: self._verdicts[vid](self.run, self.profile, self.seed))

    def diagnosis(self, function: str) -> Diagnosis | None:
        """The rubric's diagnosis of ``function`` (cached)."""
        return self.cached(("diagnosis", self.profile, self.seed, function),
                           lambda: self.rubric.diagnose(self, function))


class _Instance:
    """One check judged on one function: the verdict ``fn(runner, profile, seed)``."""

    def __init__(self, rubric: Rubric, check: str, function: str, settings: Settings, gate, table: dict):
        self.rubric, self.check, self.function, self.settings, self.gate = rubric, check, function, settings, gate
        self.verdicts = table               # every instance of the rubric, for charging a mistake once
        self.vid = rubric.check_id(check, function)
        self.__name__ = self.vid
        self.__doc__ = f"{check} judged on {function}: {rubric.checks[check].__doc__}"

    def __call__(self, run: Runner, profile: str, seed: int | None) -> Verdict:
        rubric, function, vid = self.rubric, self.function, self.vid
        s = Session(rubric, run, profile, seed, self.settings, self.verdicts)
        s.prefetch(rubric.module[function])
        slip = s.diagnosis(function)
        if slip is not None:
            if not rubric.agrees(s, function, slip):   # it timed work, and returned something else
                return Verdict(vid, False, rubric.not_the_work(s, function, slip))
            # the slipped work need not follow the device (it may sit in the cache), but the
            # number must move as that work did: one that agrees on one device only is a guess
            stale = self.gate(s, vid, function, slipped=True) if self.gate is not None else None
            if stale is not None:
                return stale
            if slip.owner == vid:
                return Verdict(vid, False, slip.message)
            return Verdict(vid, True, f"not judged here: {function}'s timing is judged in [{slip.owner}].")
        if self.gate is not None:
            stale = self.gate(s, vid, function)
            if stale is not None:      # nothing measured: no check can pass, none is charged elsewhere
                return stale
        return self._charged_once(s, rubric.checks[self.check](s, function))

    def _charged_once(self, s: Session, verdict: Verdict) -> Verdict:
        """``verdict``, or a pass pointing at the base function's check when that failed too."""
        base = self.rubric.base.get(self.function)
        if verdict.passed or base is None or base not in self.rubric.judges[self.check]:
            return verdict
        base_id = self.rubric.check_id(self.check, base)
        try:
            other = s.verdict(base_id)
        except Exception:  # the base raised: this function's own failure stands
            return verdict
        if other.passed:
            return verdict
        return Verdict(verdict.check, True,
                       f"not judged here: {self.function} relies on {base}, judged in [{base_id}].",
                       verdict.ratio)


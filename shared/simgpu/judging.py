"""The engine that runs a lesson's GPU rubric on the simulated device; it knows no lesson.

A verdict (``Rubric.verdicts``) asks every call of the function's module (``Session.prefetch``),
then follows the ordered table of docs/simulated-gpu.md ("How a verdict is reached"), the first
row that applies deciding (``Rubric.judge``). A runner (the grader's sandbox, or the student's
process) has ``student_traced(module, function, *args, sim, **kwargs) -> (value, trace)`` and
``reference(...) -> float``; optionally ``memo`` (a dict shared by one submission's checks) and
``did_not_return(error) -> bool`` (row 0).
"""
from __future__ import annotations

import functools
import math
from dataclasses import dataclass
from typing import Any, Callable

from shared.simgpu import ratios

Settings = Callable[[str, "int | None"], dict]


@dataclass(frozen=True)
class Verdict:
    """One check's outcome: ``passed``, a short ``message`` and the ratio it judged (or None)."""

    check: str
    passed: bool
    message: str
    ratio: float | None = None


class NotANumber(Exception):
    """A call returned ``value``, no positive finite number: the check fails (``not_a_number``)."""

    def __init__(self, function: str, value: Any):
        super().__init__(function)
        self.function, self.value = function, value


@dataclass(frozen=True)
class Diagnosis:
    """A slip a timed region shows, charged on check ``owner`` with ``message``: ``rate`` is what
    the timed work ran at (the function's unit), ``scale`` the work asked over the work timed,
    ``work`` the largest timed kernel's bytes or FLOPs, ``base`` the called function whose slip it
    is, ``why`` what row 1 says when the number does not agree (else ``not_the_work``), ``moves``
    that the timed work still moves with the device (host idle beside it), so row 3 wants the
    number to move too, as for no slip; ``idled`` that the number is the rate of a window the host
    idled in, which its work alone does not explain, so row 3 wants that idle a fixed wait (a
    rubric's ``agrees`` may take a count or share that needs the idle for no measurement)."""

    kind: str
    owner: str
    message: str
    rate: float
    scale: float = 1.0
    work: float = 0.0
    base: str = ""
    why: str = ""
    moves: bool = False
    idled: bool = False


class Rubric:
    """A lesson's GPU checks. Its tables: ``judges`` (check -> the functions it judges, the
    lesson's own first), ``module`` (function -> student module), ``base`` (function -> the
    function it usually calls: a mistake there is charged once, on it) and ``checks`` (check ->
    ``fn(session, function) -> Verdict``). Its hooks: ``call(s, function, variant) -> (args,
    kwargs)``; ``variants(s, function, setting)``, the calls made under a setting (None: the usual
    one); ``prelude(s, module, i)``, [(function, variant)] called unjudged in round ``i`` ahead of
    the judged calls; ``pick(function, value, args)``, the number out of a return value;
    ``diagnose(s, function) -> Diagnosis | None`` and ``agrees(s, function, diagnosis)`` (rows
    1-2); ``say(key, function=..., **fields)``, its messages (the engine's: ``not_a_number``,
    ``not_the_work``, ``judged_in_slip``, ``judged_in_base``; the probe's: ``not_following``,
    ``not_following_nothing_timed``); ``work(function, timed)``, the bytes or FLOPs timed, and
    ``speed(function)``, 'bw' or 'peak', and ``fastest(function, timed)``, the work per second of
    the fastest span between two clock readings that timed some, and ``clean(function, timed)``,
    the work per second of the spans between clock readings when they hold all of it (else 0),
    which the probe asks, as it asks ``honest(function, number, timed, seconds)``, whether
    ``number`` is the work of the window ``timed`` over ``seconds`` counted and in the unit asked.
    The defaults: one usual call, no prelude, the value itself, no slips, no span known (0), no
    rate called honest."""

    judges: dict[str, tuple[str, ...]] = {}
    module: dict[str, str] = {}
    base: dict[str, str] = {}
    checks: dict[str, Callable[["Session", str], Verdict]] = {}

    def call(self, s: "Session", function: str, variant: Any) -> tuple[tuple, dict]:
        raise NotImplementedError

    def variants(self, s: "Session", function: str, setting: str) -> tuple:
        return (None,)

    def prelude(self, s: "Session", module: str, i: int) -> list:
        return []

    def pick(self, function: str, value: Any, args: tuple) -> Any:
        return value

    def diagnose(self, s: "Session", function: str) -> Diagnosis | None:
        return None

    def agrees(self, s: "Session", function: str, slip: Diagnosis) -> bool:
        return True

    def say(self, key: str, **fields) -> str:
        raise NotImplementedError

    def work(self, function: str, timed: dict) -> float:
        raise NotImplementedError

    def speed(self, function: str) -> str:
        raise NotImplementedError

    def fastest(self, function: str, timed: dict) -> float:
        return 0.0

    def clean(self, function: str, timed: dict) -> float:
        return 0.0

    def honest(self, function: str, number: float, timed: dict, seconds: float) -> bool:
        return False

    def check_id(self, check: str, function: str) -> str:
        """'sync_present' for the check's first function, else 'sync_present.matmul_tflops'."""
        return check if self.judges[check][0] == function else f"{check}.{function}"

    def ids(self) -> dict[str, tuple[str, str]]:
        """Every check instance: id -> (check, function), in ``judges`` order."""
        return {self.check_id(c, f): (c, f) for c, functions in self.judges.items() for f in functions}

    def verdicts(self, settings: Settings, gate: Callable | None = None) -> dict[str, Callable]:
        """Every check instance by id: ``fn(runner, profile, seed) -> Verdict`` under ``settings``,
        with ``gate(session, check_id, function, slipped=False) -> Verdict | None`` asked first."""
        table: dict[str, Callable] = {}
        for vid, (check, function) in self.ids().items():
            table[vid] = functools.partial(self.judge, check, function, settings, gate, table)
        return table

    def judge(self, check: str, function: str, settings: Settings, gate: Callable | None, table: dict,
              run, profile: str, seed: int | None) -> Verdict:
        """``check`` judged on ``function`` (``table`` holds every instance, for charging a mistake
        once): the rows of docs/simulated-gpu.md's table, in order."""
        vid = self.check_id(check, function)
        s = Session(self, run, profile, seed, settings, table, vid)
        s.prefetch(self.module[function])
        stuck = s.stuck(function)
        if stuck is not None:                                                           # row 0
            raise stuck
        slip = s.diagnosis(function)
        if slip is not None and not self.agrees(s, function, slip):                    # row 1
            x = s.x(function)
            ratio = x / slip.rate if x is not None and slip.rate > 0 else math.nan
            return Verdict(vid, False, slip.why or self.say("not_the_work", function=function, ratio=ratio))
        try:
            stale = gate(s, vid, function, slipped=slip is not None and not slip.moves) if gate is not None else None
            if stale is not None:                                                       # row 3
                return stale
            if slip is not None:                                                        # rows 1-2
                if slip.owner == vid:
                    return Verdict(vid, False, slip.message)
                return Verdict(vid, True, self.say("judged_in_slip", function=function, check=slip.owner))
            verdict = self.checks[check](s, function)                                   # row 4
        except NotANumber as exc:
            return Verdict(vid, False, self.say("not_a_number", function=exc.function, value=exc.value))
        base = self.base.get(function)
        if verdict.passed or base is None or base not in self.judges[check]:
            return verdict
        base_id = self.check_id(check, base)
        try:
            if not s.verdict(base_id).passed:                                           # row 5
                return Verdict(vid, True, self.say("judged_in_base", function=function, base=base, check=base_id),
                               verdict.ratio)
        except Exception:  # the base raised: this function's own failure stands
            pass
        return verdict


class Session:
    """One verdict's view of the runner (``vid``: the check instance it judges); every call,
    reference and verdict cached in the memo: the simulator is deterministic."""

    def __init__(self, rubric: Rubric, run, profile: str, seed: int | None, settings: Settings, verdicts: dict,
                 vid: str = ""):
        self.rubric, self.run, self.profile, self.seed, self.vid = rubric, run, profile, seed, vid
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
        cfg, module = self.cfgs[setting], self.rubric.module[function]
        args, kwargs = self.rubric.call(self, function, variant)
        key = ("student", self.profile, self.seed, setting, function, args)
        if variant is not None and kwargs != self.rubric.call(self, function, None)[1]:
            key += (tuple(sorted(kwargs.items())),)          # a variant of the keyword arguments
        value, trace = self.cached(key, lambda: self.run.student_traced(module, function, *args, sim=cfg, **kwargs))
        raw = self.rubric.pick(function, value, args)
        return raw, ratios.number(raw), trace or {}

    def x(self, function: str, variant: Any = None) -> float | None:
        """``function``'s number on the seeded device (``"ideal"``), or None when it is none."""
        return self.measure(function, "ideal", variant)[1]

    def window(self, function: str, variant: Any = None) -> dict:
        """What ran between ``function``'s first and last clock reading on the seeded device."""
        return self.measure(function, "ideal", variant)[2].get("timed") or {}

    def number(self, function: str, setting: str, variant: Any = None) -> tuple[float, dict]:
        """(``function``'s number, trace) under ``setting``; NotANumber when it returned none."""
        raw, x, trace = self.measure(function, setting, variant)
        if x is None:
            raise NotANumber(function, raw)
        return x, trace

    def prefetch(self, module: str) -> None:
        """Every call the checks make of ``module``'s functions, setting by setting, errors kept for
        the check that asks; callers first on the seeded device (a cached number then times nothing
        there). Before them, ``cfgs["prelude"]`` rounds of ``Rubric.prelude``'s calls and every judged
        call, unjudged: a program honest only for its first few calls is judged on one it forged."""
        key = ("prefetched", self.profile, self.seed, module)
        if key in self.memo:
            return
        self.memo[key] = True
        functions = [f for f in self.rubric.module if self.rubric.module[f] == module]
        callers_first = sorted(reversed(functions), key=lambda f: f not in self.rubric.base)
        raised: set[str] = set()      # a function that raised is not asked again ahead of a check
        for setting in self.cfgs["order"]:
            calls = [(function, variant) for function in (callers_first if setting == "ideal" else functions)
                     for variant in self.rubric.variants(self, function, setting)]
            rounds = range(self.cfgs.get("prelude", {}).get(setting, 0))
            failed: set[str] = set()      # an unjudged call's error is the judged call's to meet
            for function, variant in [c for i in rounds for c in self.rubric.prelude(self, module, i)] + \
                    calls * len(rounds):
                args, kwargs = self.rubric.call(self, function, variant)
                try:
                    if function not in failed:
                        self.run.student_traced(module, function, *args, sim=self.cfgs[setting], **kwargs)
                except Exception:  # met again by the judged call
                    failed.add(function)
            for function, variant in calls:
                if function not in raised:
                    try:
                        self.measure(function, setting, variant)
                    except Exception:  # cached; re-raised to the check that asks
                        raised.add(function)

    def stuck(self, function: str) -> Exception | None:
        """The first call of ``function`` so far that did not return (the runner's ``did_not_return``),
        else None: it fails every check of the function (row 0), whichever calls load let it reach."""
        did_not_return = getattr(self.run, "did_not_return", None)
        if did_not_return is None:
            return None
        mine = ("student", self.profile, self.seed)
        calls = [v for k, v in self.memo.items() if k[:3] == mine and k[4] == function]
        return next((value for ok, value in calls if not ok and did_not_return(value)), None)

    def reference(self, function: str, setting: str, *args, **kwargs) -> float:
        """What a correct ``function(*args, **kwargs)`` reads under ``setting`` (cached)."""
        key = ("reference", self.profile, self.seed, setting, function, args, tuple(sorted(kwargs.items())))
        cfg, module = self.cfgs[setting], self.rubric.module[function]
        return float(self.cached(key, lambda: self.run.reference(module, function, *args, sim=cfg, **kwargs)))

    def verdict(self, vid: str) -> Verdict:
        """The verdict of check instance ``vid`` (cached), for charging a mistake once."""
        return self.cached(("verdict", self.profile, self.seed, vid),
                           lambda: self._verdicts[vid](self.run, self.profile, self.seed))

    def diagnosis(self, function: str) -> Diagnosis | None:
        """The rubric's diagnosis of ``function`` (cached)."""
        return self.cached(("diagnosis", self.profile, self.seed, function),
                           lambda: self.rubric.diagnose(self, function))

"""The calls the grader makes before the judged ones (autograder/gpu/probe.py's ``prelude``,
shared/simgpu/judging.py's ``Session.prefetch``), in this process and without a sandbox: under
any secret, a program honest only for its first few calls -- of the process, of a function, at a
size, or of its first few sizes -- answers every judged call on the seeded and the probe's device
(and the asynchronous one) from a call it did not measure. The real grader's verdict on such a
program: forged/honest_first_five in the adversarial set.
"""
from __future__ import annotations

from collections import Counter

from hypothesis import given, settings
from hypothesis import strategies as st

from autograder.gpu import probe
from shared.lessons.why17.gpu import RUBRIC
from shared.simgpu.judging import Session

PROFILE = "h100-sxm"
#: How many first calls the programs below measure honestly (forged/honest_first_five: 3 sizes,
#: 5 calls); probe.PRELUDE_ROUNDS starts above it.
HONEST_FOR = 3


class _Recorder:
    """A runner that numbers every student call of each simulated process (one per setting, as
    the grader runs them; a call is its function, arguments and keyword arguments) and returns
    that number, so that a judged value says which call made it."""

    def __init__(self):
        self.calls: dict[str, list[tuple[str, tuple]]] = {}

    def student_traced(self, module, function, *args, sim, **kwargs):
        calls = self.calls.setdefault(_setting_of(sim), [])
        calls.append((function, (*args, *sorted(kwargs.items()))))   # another iters: another call
        return len(calls) - 1, {}

    def reference(self, module, function, *args, sim, **kwargs):
        return 1.0


_CFGS: dict = {}


def _setting_of(sim: dict) -> str:
    return next(name for name in _CFGS["order"] if _CFGS[name] is sim)


def _honest(calls: list, at: int) -> dict[str, bool]:
    """Whether call ``at`` of a process is measured by a program honest only for its first
    HONEST_FOR calls of the process, of the module, of the function, at the call's size, or of the
    sizes it meets."""
    function, args = calls[at]
    before = calls[:at]
    sizes = list(dict.fromkeys(before))
    return {"per process": at < HONEST_FOR,
            "per module": sum(RUBRIC.module[f] == RUBRIC.module[function] for f, _a in before) < HONEST_FOR,
            "per function": Counter(f for f, _a in before)[function] < HONEST_FOR,
            "per size": Counter(before)[(function, args)] < HONEST_FOR,
            "first sizes": len(sizes) < HONEST_FOR or (function, args) in sizes[:HONEST_FOR]}


@settings(max_examples=30)
@given(seed=st.integers(0, 2**64 - 1))
def test_no_judged_call_is_one_a_program_honest_only_for_its_first_calls_measures(seed):
    runner = _Recorder()
    s = Session(RUBRIC, runner, PROFILE, seed, probe.settings, {})
    _CFGS.clear()
    _CFGS.update(s.cfgs)
    for module in ("bw", "flops"):
        s.prefetch(module)
    judged = [(key[3], value[1][0]) for key, value in s.memo.items() if key[0] == "student"]
    assert {setting for setting, _at in judged} == {"ideal", "probe", "async", "cold"}
    for setting, at in judged:
        if setting == "cold":          # the process's first use is what cold judges
            continue
        honest = _honest(runner.calls[setting], at)
        assert not any(honest.values()), (setting, runner.calls[setting][at], honest)


def test_the_judged_call_is_made_after_the_unjudged_ones_even_at_their_size():
    """An unjudged call never stands in for the judged one: each judged call reaches the program
    once more after its prelude, however often the prelude made the same call."""
    runner = _Recorder()
    s = Session(RUBRIC, runner, PROFILE, 5, probe.settings, {})
    _CFGS.clear()
    _CFGS.update(s.cfgs)
    s.prefetch("flops")
    calls = runner.calls["ideal"]
    at = s.memo[next(k for k in s.memo if k[0] == "student" and k[3] == "ideal" and k[4] == "matmul_tflops")][1][0]
    assert at > max(i for i, c in enumerate(calls) if c == calls[at] and i != at)
    assert Counter(calls)[calls[at]] == s.cfgs["prelude"]["ideal"] + 1

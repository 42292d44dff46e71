"""Every call counts the same: a number honest only at the iters the checks usually ask, or a
correction factor in a function that calls one so, measures nothing and fails every check of its
function; a count taken from the arguments is told by the clock readings that bracket the work,
not by a reading taken later to stretch the window (written against the eighth reviewer's
forgeries in the adversarial set: honest_only_at_iters_ten, idle_pad_makes_factor_a_count)."""
from __future__ import annotations

from shared.lessons.why17.gpu import RUBRIC, counts, rubric, slips
from shared.simgpu.judging import Diagnosis, Session

#: Seconds and bytes of one timed copy on the seeded device.
COPY_S, COPY_BYTES = 1e-3, 2**30
#: A correction factor: the measurement divided by an "efficiency" of 0.87.
FACTOR = 1 / 0.87


class _Session:
    """The bw functions on the seeded device: copy_bandwidth times ``timed(iters)`` copies and
    reports ``counted(iters)`` of them over their time, plus ``pad(iters)`` idle seconds between
    its last copy and a last clock reading; measured_bandwidth calls it at ``CALLER_ITERS`` and
    reports ``caller(x)`` of what it returned. The spans between clock readings that timed
    copies ran at ``slowest`` to 1 times the copies' rate."""

    rubric = RUBRIC
    cfgs = {"ideal": {"l2_bytes": 50 * 2**20, "bw_gbs": 3350.0}}
    vid = "sync_present"
    CALLER_ITERS = 20
    number, x, window = Session.number, Session.x, Session.window

    def __init__(self, timed, counted, pad=lambda iters: 0.0, caller=lambda x: x, base=None, slowest=1.0, cold=1.0):
        self.timed, self.counted, self.pad, self.caller, self.base = timed, counted, pad, caller, base
        self.slowest = slowest      # the slowest span's rate over the fastest's
        self.cold = cold            # the number with the first use's cost over the number without

    def _copies(self, iters):
        items = self.timed(iters)
        work_s = items * COPY_S
        window = {"copies": items, "copy_bytes": items * COPY_BYTES, "duration_s": work_s + self.pad(iters),
                  "clean_copy_bytes": items * COPY_BYTES, "clean_s": work_s,
                  "copy_span_rates": [self.slowest * COPY_BYTES / COPY_S, COPY_BYTES / COPY_S, COPY_BYTES / COPY_S]}
        return 2 * self.counted(iters) * COPY_BYTES / work_s / 1e9, window

    def measure(self, function, setting, variant=None):
        if function == "measured_bandwidth":
            x, window = self._copies(self.CALLER_ITERS)
            x = self.caller(x)
        else:
            x, window = self._copies(RUBRIC.call(self, function, variant)[1]["iters"])
        x *= self.cold if setting == "cold" else 1.0
        return x, x, {"timed": window}

    def diagnosis(self, function):
        """copy_bandwidth's diagnosis as far as these tests need it (``base``, else every call counts)."""
        return (self.base or _unlike(self)) if function == "copy_bandwidth" else None


def _unlike(session, function="copy_bandwidth"):
    timed = session.measure(function, "ideal")[2]["timed"]
    return slips._unlike(session, function, timed, plain=True)


def test_a_number_honest_only_at_the_usual_iters_fails_every_check_of_its_function():
    usual = rubric.LIMITS.iters
    found = _unlike(_Session(lambda i: i, lambda i: i if i == usual else FACTOR * i))
    assert found is not None and found.kind == "not_measured"
    assert "at iters=" in found.why and "Reread" in found.why
    assert not RUBRIC.agrees(_Session(lambda i: i, lambda i: i), "copy_bandwidth", found)


def test_an_honest_number_is_the_same_at_every_iters_and_a_count_is_the_argument_checks():
    assert _unlike(_Session(lambda i: i, lambda i: i)) is None
    for counted in (_Session(lambda i: i, lambda i: i + 3),                  # warm-ups counted in
                    _Session(lambda i: i, lambda i: i + max(3, i // 5)),     # as many as iters asks
                    _Session(lambda i: i - 1, lambda i: i),                  # a loop off by one
                    _Session(lambda i: min(i, 16), lambda i: i)):            # a loop capped at 16
        assert _unlike(counted).owner == "bw_honours_args"


def test_a_caller_that_scales_an_honest_measurement_at_its_own_iters_measures_nothing():
    usual = rubric.LIMITS.iters
    forged = _Session(lambda i: i, lambda i: i if i == usual else FACTOR * i)
    assert forged.diagnosis("copy_bandwidth").kind == "not_measured"
    found = _unlike(forged, "measured_bandwidth")
    assert found is not None and found.kind == "not_measured"


def test_a_caller_that_scales_what_an_honest_base_measured_measures_nothing():
    # honest at every call of copy_bandwidth the checks make; measured_bandwidth (its own sizes
    # and iters) reports 1.1x what it got
    found = _unlike(_Session(lambda i: i, lambda i: i, caller=lambda x: 1.1 * x), "measured_bandwidth")
    assert found is not None and found.kind == "not_measured"


def test_a_caller_that_reports_its_fastest_span_or_inherits_its_bases_number_is_a_measurement():
    # the best of several sizes (one span twice as fast as another): within the spans' rates
    assert _unlike(_Session(lambda i: i, lambda i: i, slowest=0.5), "measured_bandwidth") is None
    # the base is off by a factor at every iters; the caller returns what it got: judged there
    base = Diagnosis("not_measured", "sync_present", "", 1.0)
    assert _unlike(_Session(lambda i: i, lambda i: FACTOR * i, base=base), "measured_bandwidth") is None
    scaled_again = _Session(lambda i: i, lambda i: FACTOR * i, base=base, caller=lambda x: 1.3 * x)
    assert _unlike(scaled_again, "measured_bandwidth").kind == "not_measured"


def test_one_span_slowed_on_purpose_does_not_widen_what_a_caller_may_report():
    # t10_f_slow_span_widens_caller: a sleep in one span makes the slowest span 0.25x the copies'
    # rate; the caller reports 0.85x, between that span and the others
    widened = _Session(lambda i: i, lambda i: i, slowest=0.25, caller=lambda x: 0.85 * x)
    assert _unlike(widened, "measured_bandwidth").kind == "not_measured"
    # the worst of spans that ran alike, or their total, is a measurement
    alike = _Session(lambda i: i, lambda i: i, slowest=0.99, caller=lambda x: 0.99 * x)
    assert _unlike(alike, "measured_bandwidth") is None
    # a factor of the caller's own (GiB/s where its base reports GB/s) is charged on no check of
    # the caller, so it explains nothing (t10_f_slow_span_widens_caller's 0.9x read as one)
    own_unit = _Session(lambda i: i, lambda i: i, caller=lambda x: x * 1e9 / 2**30)
    assert _unlike(own_unit, "measured_bandwidth").kind == "not_measured"


def test_a_caller_timing_its_warm_up_is_charged_on_warmup_present_alone():
    # the warm-ups fall between the caller's clock readings: its number is low, its cold one lower
    # (iters / (iters + 3) of the copies' rate: 10/13 in the base, 20/23 in the caller's own call)
    assert _unlike(_Session(lambda i: i + 3, lambda i: i, cold=0.5), "measured_bandwidth") is None
    assert _unlike(_Session(lambda i: i + 3, lambda i: i), "measured_bandwidth").kind == "not_measured"


def test_an_idle_pad_that_makes_a_factor_read_as_warm_ups_counted_in_is_no_count():
    # the factor reported over the copies' own readings; a sleep and a last reading stretch the
    # window until the count it implies over the whole window is iters + 5 at every iters
    padded = _Session(lambda i: i, lambda i: FACTOR * i, pad=lambda i: COPY_S * ((i + 5) / FACTOR - i))
    x, _x, trace = padded.measure("copy_bandwidth", "ideal")
    window_rate = 2 * trace["timed"]["copy_bytes"] / trace["timed"]["duration_s"] / 1e9
    assert abs(rubric.LIMITS.iters * x / window_rate - (rubric.LIMITS.iters + 5)) < 1e-6     # whole over the window
    assert counts.count(padded, "copy_bandwidth") is None
    assert counts.count(_Session(lambda i: i, lambda i: i + 3), "copy_bandwidth") is not None
    # t10_f_sleep_in_copy_span_makes_count: the sleep inside one span instead; the spans then ran
    # at different rates, and no one rate counts the copies
    assert counts.count(_Session(lambda i: i, lambda i: i + 3, slowest=0.5), "copy_bandwidth") is None


def test_one_call_that_did_not_return_fails_every_check_of_its_function():
    """A copy_bandwidth whose first-use (``cold``) call runs past its limit: only warmup_present
    reads that call, yet which checks' calls a slow program reaches before its limit depends on
    how busy the machine is (forged/pool_keeps_working_after_return passed one check only under
    load), so every check of the function fails with the call's line; the flops checks, whose
    calls all returned, pass."""
    from autograder.core.errors import StudentTimeout
    from autograder.gpu import checks, probe
    from autograder.lessons.why17.checks.gpu import VERDICTS
    from shared.lessons.why17.gpu import model_reference
    from shared.simgpu.local import LocalRunner
    from tests.helpers import reference

    cold = probe.settings("h100-sxm", 7)["cold"]

    class _ColdHangs(LocalRunner):
        did_not_return = staticmethod(checks.ContextRunner.did_not_return)

        def student_traced(self, module, function, *args, sim, **kwargs):
            if function == "copy_bandwidth" and sim == cold:
                raise StudentTimeout("copy_bandwidth did not return within 60 s")
            return super().student_traced(module, function, *args, sim=sim, **kwargs)

    run = _ColdHangs({"bw": reference.load("bw"), "flops": reference.load("flops")}, model_reference)
    judged = {vid: f for vid, (_c, f) in RUBRIC.ids().items() if f in ("copy_bandwidth", "matmul_tflops")}
    found = {}
    for vid in judged:
        try:
            found[vid] = VERDICTS[vid](run, "h100-sxm", 7).passed
        except StudentTimeout as exc:
            found[vid] = str(exc)
    assert {v for v, f in found.items() if f is True} == {v for v, f in judged.items() if f == "matmul_tflops"}
    assert {found[v] for v, f in judged.items() if f == "copy_bandwidth"} == {
        "copy_bandwidth did not return within 60 s"}


def test_work_run_with_no_clock_read_around_it_is_no_count_of_the_work_asked():
    """A call that ran more copies than asked with no clock read around them (a spec guess
    returned: forged/t11_f_load_switch_guess on a busy machine) has a window of no seconds: the
    work asked over more work timed is not its reading, and reading it raises nothing (the
    grader once failed there, its error no grade)."""
    class _Untimed(_Session):
        def _copies(self, iters):
            x, window = super()._copies(iters)
            return x, dict(window, duration_s=0.0, clean_s=0.0)

    s = _Untimed(timed=lambda iters: iters + 3, counted=lambda iters: iters)
    assert counts.asked(s, "copy_bandwidth") is None

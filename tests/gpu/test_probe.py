"""The hidden probe (autograder/gpu/probe.py), in this process and without a sandbox: the probe's
device is the seeded one scaled by factors drawn with the seed, the settings' order is drawn too,
and the gate ``follows`` passes a number that moves with the timed work's rate and fails one that
does not. The attacks on the simulated GPU, through the real grader, are test_simgpu_attacks.py's.
"""
from __future__ import annotations

import math
from fractions import Fraction

import pytest

from autograder.gpu import probe
from shared.simgpu import settings as simsettings
from shared.simgpu.judging import Diagnosis, NotANumber, Session

PROFILE = "h100-sxm"
SEEDS = range(40)


@pytest.mark.parametrize("seed", [0, 17, 2**40 + 3])
def test_the_probe_is_the_seeded_device_scaled_within_one_range(seed):
    out = probe.settings(PROFILE, seed)
    base = simsettings.base(PROFILE, seed)
    assert {k: out[k] for k in ("ideal", "async", "cold")} == {k: base[k] for k in ("ideal", "async", "cold")}
    ideal, found = out["ideal"], out["probe"]
    bw, peak = found["bw_gbs"] / ideal["bw_gbs"], found["peak_tflops"] / ideal["peak_tflops"]
    assert out["factors"] == {"probe": {"bw": bw, "peak": peak}}
    # both factors from one range, so a matmul compute-bound on the seeded device stays so
    assert any(low * 0.99 <= bw <= high * 1.01 and low * 0.99 <= peak <= high * 1.01 for low, high in probe.SCALES)
    assert {k: v for k, v in found.items() if k not in ("bw_gbs", "peak_tflops")} == \
        {k: v for k, v in ideal.items() if k not in ("bw_gbs", "peak_tflops")}
    assert sorted(out["order"]) == ["async", "cold", "ideal", "probe"]


def test_the_same_seed_draws_the_same_probe_and_seeds_draw_both_ranges_and_many_orders():
    assert probe.settings(PROFILE, 5) == probe.settings(PROFILE, 5)
    drawn = [probe.settings(PROFILE, seed) for seed in SEEDS]
    faster = {out["factors"]["probe"]["bw"] > 1 for out in drawn}
    assert faster == {True, False}
    assert len({tuple(out["order"]) for out in drawn}) > 5
    assert len({out["probe"]["bw_gbs"] for out in drawn}) > 30


def test_the_sizes_asked_and_the_calls_before_them_are_drawn_from_the_secret():
    """The grader's copy sizes and matmul n are drawn from the seed, any count but never a simple
    fraction of the L2 (8x, 1/8) nor a power of two; before the judged calls, each setting without the
    first-use cost makes a drawn number of unjudged ones. A student's machine asks the public sizes."""
    from shared.lessons.why17.gpu import rubric

    drawn = [probe.settings(PROFILE, seed) for seed in SEEDS]
    for out in drawn:
        small, large, n = rubric.asked(out)
        l2 = out["ideal"]["l2_bytes"]
        assert l2 <= 10 * small and 8 * small <= l2 and 6 * l2 <= large + 2**20 and large <= 12 * l2
        assert Fraction(small, l2).denominator > 16 and Fraction(large, l2).denominator > 16
        assert 3072 <= n <= 6144 and n & (n - 1) != 0
        assert set(out["prelude"]) == {"ideal", "probe", "async"}
        assert all(probe.PRELUDE_ROUNDS[0] <= k <= probe.PRELUDE_ROUNDS[1] for k in out["prelude"].values())
    assert len({rubric.asked(out) for out in drawn}) > 30
    # no round number a program could be honest at only: most sizes are not whole MiB, most n
    # not a multiple of 64
    asked = [rubric.asked(out) for out in drawn]
    assert sum(small % 2**20 != 0 and large % 2**20 != 0 for small, large, _ in asked) > len(asked) / 2
    assert sum(n % 64 != 0 for _, _, n in asked) > len(asked) / 2
    assert len({tuple(out["prelude"].values()) for out in drawn}) > 10
    public = simsettings.base(PROFILE, 3)
    assert rubric.asked(public) == (*rubric.sizes(public["ideal"]), rubric.LIMITS.matmul_n)


class _Rubric:
    """The rubric's side of ``follows``: bytes timed are the work, bandwidth the speed."""

    def work(self, function, timed):
        return timed["bytes"]

    def speed(self, function):
        return "bw"

    def fastest(self, function, timed):
        return timed.get("fastest", 0.0)

    def clean(self, function, timed):
        return timed.get("clean_rate", 0.0)

    def honest(self, function, number, timed, seconds):
        """A number is MB/s of the bytes timed (1000.0 for 1 GB in 1 s)."""
        return seconds > 0 and math.isclose(number, timed["bytes"] / seconds / 1e6, rel_tol=0.02)

    def variants(self, s, function, setting):
        return s.variants

    def say(self, key, function, moved=None, scale=None, work_moved=None, ratio=None, **idle):
        if key == "idle_varies":
            return f"{function} idles {idle['ms']:.0f} ms and {idle['other_ms']:.0f} ms"
        if key in ("not_read_off_window", "not_read_off_clock"):
            return f"{function} {key}; its number is x{ratio:.2f} the rate of the work it launched"
        if key == "paced_while_running":
            return f"{function} {key} after sleeping {idle['share']:.0%} of its window"
        return f"{function} moved x{moved} on a device x{scale:.2f} as fast (work rate x{work_moved})"


class _Session:
    """A session whose student function returned ``values`` after timing ``timed`` on the seeded
    device (``ideal``) and on the probe's, which is twice as fast."""

    rubric = _Rubric()
    cfgs = {"factors": {"probe": {"bw": 2.0, "peak": 2.0}}}

    def __init__(self, values: dict, timed: dict, diagnosis: Diagnosis | None = None, others: dict | None = None):
        self.values, self.timed, self._diagnosis = values, timed, diagnosis
        #: Other calls asked on both devices (a small size, a second iters): variant -> timed by setting.
        self.others = others or {}
        self.variants = (None, *self.others)

    def diagnosis(self, function):
        return self._diagnosis

    def measure(self, function, setting, variant=None):
        value = self.values[setting]
        timed = self.timed if variant is None else self.others[variant]
        return value, value if isinstance(value, float) else None, {"timed": timed[setting]}

    number = Session.number


GB = 1e9
#: Timed regions: the same bytes, half the seconds on the probe's device.
MEASURED = {"ideal": {"bytes": GB, "duration_s": 1.0}, "probe": {"bytes": GB, "duration_s": 0.5}}


def test_a_number_that_moves_with_the_timed_work_follows_the_device():
    assert probe.follows(_Session({"ideal": 1000.0, "probe": 2000.0}, MEASURED), "sync_present", "copy") is None


def test_a_hard_coded_number_does_not_follow_and_the_ratio_says_how_far_off():
    verdict = probe.follows(_Session({"ideal": 1000.0, "probe": 1000.0}, MEASURED), "sync_present", "copy")
    assert not verdict.passed and verdict.check == "sync_present"
    assert math.isclose(verdict.ratio, 0.5) and "moved x1.00x on a device x2.00" in verdict.message


def test_timed_work_that_does_not_move_with_the_device_measures_nothing():
    still = {"ideal": {"bytes": GB, "duration_s": 1.0}, "probe": {"bytes": GB, "duration_s": 1.0}}
    verdict = probe.follows(_Session({"ideal": 1000.0, "probe": 2000.0}, still), "sync_present", "copy")
    assert not verdict.passed and "(work rate xNone)" in verdict.message
    untimed = {"ideal": {"bytes": GB, "duration_s": 0.0}, "probe": {"bytes": GB, "duration_s": 0.0}}
    assert not probe.follows(_Session({"ideal": 1000.0, "probe": 2000.0}, untimed), "sync_present", "copy").passed


def test_a_number_read_off_the_spans_holding_its_work_follows_though_the_window_holds_a_sleep():
    """good/t15_g_asyncio_executor_wait_for: the window runs from an event loop's first clock
    reading to its last and holds a 0.5 s sleep that no device speeds up; the work's own span
    moved 2x, as the number did. Before, the probe read the work's rate over the whole window
    (1.5 s, then 1.0 s: x1.5) and said the number did not follow."""
    slept = {setting: dict(MEASURED[setting], duration_s=MEASURED[setting]["duration_s"] + 0.5,
                           clean_rate=GB / MEASURED[setting]["duration_s"]) for setting in MEASURED}
    assert probe.follows(_Session({"ideal": 1000.0, "probe": 2000.0}, slept), "sync_present", "copy") is None
    partial = {setting: dict(slept[setting], clean_rate=0.0) for setting in slept}   # spans hold part: the window
    assert not probe.follows(_Session({"ideal": 1000.0, "probe": 2000.0}, partial), "sync_present", "copy").passed


def _idled(seconds: float, idle_s: float) -> dict:
    """A window of ``seconds`` timing 1 GB of copies, ``idle_s`` of it the host idle after them."""
    return {"bytes": GB, "duration_s": seconds, "idle_s": idle_s}


def test_a_window_padded_to_a_time_of_its_own_does_not_follow_the_device():
    """forged/t16_f_spec_paced_idle where the probe's device is slower than its pace: the copies
    take 0.6 s on the seeded device and a sleep pads the window to 1.0 s; on the probe's they take
    1.2 s, past the pace, so nothing pads it. Each number is its window's rate, yet the work's own
    rate (the window less its idle) halved while the number fell to 0.83x. Before, the probe read
    the whole windows, which moved as the numbers did."""
    paced = {"ideal": _idled(1.0, 0.4), "probe": _idled(1.2, 0.0)}
    verdict = probe.follows(_Session({"ideal": 1000.0, "probe": 1000.0 / 1.2}, paced), "sync_present", "copy")
    assert not verdict.passed and math.isclose(verdict.ratio, (1 / 1.2) / 0.5)
    assert "(work rate x0.5)" in verdict.message


def test_one_item_padded_to_many_does_not_follow_though_its_idle_moves_by_one_items_time():
    """forged/t16_f_one_item_paced_as_iters: one copy (0.1 s on the seeded device, 0.05 s on the
    probe's) and a sleep to a fixed 1.0 s window: the idle differs by 0.05 s, a twentieth of the
    window but half the work. Read as a count slip (``slipped``), the whole windows stood still as
    the numbers did; the work's own rate doubled."""
    padded = {"ideal": _idled(1.0, 0.9), "probe": _idled(1.0, 0.95)}
    verdict = probe.follows(_Session({"ideal": 1000.0, "probe": 1000.0}, padded), "units", "copy", slipped=True)
    assert not verdict.passed and math.isclose(verdict.ratio, 0.5)


def test_a_wait_as_long_on_both_devices_follows_as_its_window_does():
    """A fixed 0.4 s sleep in the window (sync_present's alone, as host idle): the number moves as
    the whole window's rate does (0.625x), not as the work alone (0.5x), and the probe passes it."""
    slept = {"ideal": _idled(1.0, 0.4), "probe": _idled(1.6, 0.4)}
    assert probe.follows(_Session({"ideal": 1000.0, "probe": 625.0}, slept), "sync_present", "copy") is None


#: The rubric's reading of a number that is its window's rate only with the host's idle in it.
IDLED = Diagnosis("host_idle", "sync_present", "", 1000.0, moves=True, idled=True)


def test_a_wait_that_grows_with_the_work_leaves_a_number_of_the_programs_choosing():
    """forged/t17_f_pace_proportional: a sleep of a share of the work's time, remembered from the
    process's first call, after the copies. The number is the window's rate on both devices and
    moves as the work does; only the idle, 0.2 s and 0.1 s, says it is a pace and no fixed wait.
    Before, the probe passed it and only sync_present charged the idle."""
    paced = {"ideal": _idled(1.2, 0.2), "probe": _idled(0.6, 0.1)}
    numbers = {"ideal": 1000.0 / 1.2, "probe": 1000.0 / 0.6}
    verdict = probe.follows(_Session(numbers, paced, IDLED), "sync_present", "copy")
    assert not verdict.passed and verdict.message == "copy idles 200 ms and 100 ms"
    assert probe.follows(_Session(numbers, paced), "sync_present", "copy") is None   # not read with the idle


def test_a_number_that_left_a_fixed_wait_in_is_sync_presents_alone():
    slept = {"ideal": _idled(1.0, 0.4), "probe": _idled(0.7, 0.4)}
    assert probe.follows(_Session({"ideal": 1000.0, "probe": 1000.0 / 0.7}, slept, IDLED), "sync_present",
                         "copy") is None


def test_a_number_that_took_a_fixed_wait_out_of_its_time_follows_its_works_own_rate():
    """good/t17_g_cooldown_nominal_subtracted: a 0.4 s cool-down inside the window, subtracted by
    the program. Its number doubles with the work's own rate; the whole window's rate moved 1.43x.
    Before, the probe read only the whole window where the idle was the same on both devices."""
    slept = {"ideal": _idled(1.0, 0.4), "probe": _idled(0.7, 0.4)}
    assert probe.follows(_Session({"ideal": 1000.0 / 0.6, "probe": 1000.0 / 0.3}, slept), "sync_present",
                         "copy") is None


def test_a_number_that_took_its_idle_out_on_the_seeded_device_takes_it_out_on_the_probes():
    """forged/t18_f_skipped_copies_replaced_by_spec_sleep: half the copies asked ran (0.5 GB in
    0.5 s), a fixed 0.5 s spec-sheet sleep stood in for the rest, and the number counts all of them
    over the window: on the seeded device that is the work's own rate (the window less its idle),
    as a program reads it that takes a timed cool-down out. On the probe's device (copies twice as
    fast, the same sleep) it is the window's rate again, a third off the work's own. Before, the
    probe passed it as a number that moved as its whole window did."""
    padded = {"ideal": dict(_idled(1.0, 0.5), bytes=GB / 2), "probe": dict(_idled(0.75, 0.5), bytes=GB / 2)}
    numbers = {"ideal": 1000.0, "probe": 1000.0 / 0.75}
    verdict = probe.follows(_Session(numbers, padded), "sync_present", "copy")
    assert not verdict.passed and "(work rate x2.0)" in verdict.message
    # taken out on both devices (good/t17_g_cooldown_nominal_subtracted), it follows
    assert probe.follows(_Session({"ideal": 1000.0, "probe": 2000.0}, padded), "sync_present", "copy") is None


#: The rubric's reading of a number whose only slip is the host's idle (a fixed wait, it says).
HOST_IDLE = Diagnosis("host_idle", "sync_present", "", 1000.0, moves=True)


def test_a_wait_sized_from_the_work_at_another_call_asked_is_a_pace_and_a_fixed_one_the_slip():
    """forged/t19_f_cliff_painted: the usual call is honest; at the small size asked the program
    sleeps until its copies read a remembered rate, asking the seeded device for 20 ms and the
    probe's for 10 ms. Every call counts the same: the wait is sized from the work, no fixed one,
    and fails every check. Before, the probe compared the usual call only, and sync_present alone
    charged the idle. A fixed 20 ms nap after each launch asked of both (wrong/t18_w_pacing_nap_
    after_each_launch) idles otherwise where the copies overlap it, and is still the slip."""
    honest = {"ideal": {"bytes": GB, "duration_s": 1.0}, "probe": {"bytes": GB, "duration_s": 0.5}}
    numbers = {"ideal": 1000.0, "probe": 2000.0}
    small = {"ideal": dict(_idled(0.03, 0.02), waited_s=0.02), "probe": dict(_idled(0.015, 0.01), waited_s=0.01)}
    verdict = probe.follows(_Session(numbers, honest, HOST_IDLE, {"small": small}), "sync_present", "copy")
    assert not verdict.passed and verdict.message == "copy idles 20 ms and 10 ms"
    napped = {setting: dict(small[setting], waited_s=0.02) for setting in small}
    assert probe.follows(_Session(numbers, honest, HOST_IDLE, {"small": napped}), "sync_present", "copy") is None
    assert probe.follows(_Session(numbers, honest, None, {"small": small}), "sync_present", "copy") is None


def test_a_value_that_is_not_a_number_is_handed_to_the_rubric_by_name():
    with pytest.raises(NotANumber) as raised:
        probe.follows(_Session({"ideal": "fast", "probe": 2000.0}, MEASURED), "sync_present", "copy")
    assert (raised.value.function, raised.value.value) == ("copy", "fast")


#: The asynchronous device: the same 1 GB of copies launched between readings 0.01 s apart, one
#: still running at the last: the clock stopped before the device finished.
STOPPED_EARLY = {"duration_s": 0.01, "launched": {"bytes": GB, "running": 1}}


def test_a_clock_stopped_early_whose_number_is_the_launched_works_rate_is_sync_presents_alone():
    """No synchronize, honestly: the number is the work launched over the short window (100x the
    seeded device's), as on the seeded device it is its work over its window; the gate passes it
    (sync_present's ratio charges it)."""
    values = {"ideal": 1000.0, "probe": 2000.0, "async": 100_000.0}
    assert probe.follows(_Session(values, {**MEASURED, "async": STOPPED_EARLY}), "sync_present", "copy") is None


def test_a_clock_stopped_early_whose_number_is_not_its_works_rate_is_no_measurement():
    """t12_f_async_calibrated_floor: the elapsed time floored at a rate calibrated on its first
    call, so the early stop reads as the seeded device's number: read off no window, it fails."""
    values = {"ideal": 1000.0, "probe": 2000.0, "async": 1000.0}
    verdict = probe.follows(_Session(values, {**MEASURED, "async": STOPPED_EARLY}), "units", "copy")
    assert not verdict.passed and verdict.check == "units" and math.isclose(verdict.ratio, 0.01)
    finished = {"duration_s": 1.0, "launched": {"bytes": GB, "running": 0}}
    assert probe.follows(_Session(values, {**MEASURED, "async": finished}), "units", "copy") is None


def test_an_early_stop_read_by_a_microsecond_clock_is_read_off_its_window():
    """wrong/nosync_end_datetime: 20 copies queued in 2.001 us, read by datetime.now() as 1 us
    (each reading rounds to a whole microsecond): its number is twice the launched work's rate,
    yet read off its window; a clock's tick is no floor. A floor far outside a tick still fails."""
    window = {"duration_s": 2.001e-6, "launched": {"bytes": GB, "running": 1}}
    values = {"ideal": 1000.0, "probe": 2000.0, "async": 1000.0 / 1e-6}
    assert probe.follows(_Session(values, {**MEASURED, "async": window}), "sync_present", "copy") is None
    floored = {**values, "async": 1000.0 / 5e-6}
    assert not probe.follows(_Session(floored, {**MEASURED, "async": window}), "units", "copy").passed


def test_a_clock_stopped_by_a_sleep_that_ended_as_the_work_would_is_a_pace():
    """forged/t18_f_nap_paced_to_cached_rate_no_sync: no synchronize; the copies are queued, then
    the host sleeps 0.99x a time kept from its first call and reads the clock while the last copy
    still runs. Read off that window, the number is the seeded device's, so sync_present's bound
    passed it and so did the probe. A nap far shorter than the work, or an early stop with no nap,
    is sync_present's alone."""
    values = {"ideal": 1000.0, "probe": 2000.0, "async": 1000.0 / 0.99}
    napped = {"duration_s": 0.99, "waited_s": 0.99, "launched": {"bytes": GB, "running": 1}}
    verdict = probe.follows(_Session(values, {**MEASURED, "async": napped}), "units", "copy")
    assert not verdict.passed and verdict.check == "units" and "paced_while_running" in verdict.message
    assert probe.follows(_Session(values, {**MEASURED, "async": {**napped, "waited_s": 0.0}}), "units", "copy") is None
    short = {"duration_s": 0.01, "waited_s": 0.01, "launched": {"bytes": GB, "running": 1}}
    assert probe.follows(_Session({**values, "async": 1000.0 / 0.01}, {**MEASURED, "async": short}), "units",
                         "copy") is None


#: The asynchronous device: the same 1 GB of copies, all finished inside a 1 s window.
FINISHED = {"duration_s": 1.0, "own_s": 1.0, "launched": {"bytes": GB, "running": 0}}


def test_a_number_above_its_finished_works_rate_where_launches_run_ahead_is_no_measurement():
    """forged/env_sync_wall_wait_libc_clock and forged/xq_sleep_overlaps_queued_work: honest where
    launches wait, 1.3x where they run ahead of the host (it sat in synchronize, or a sleep overlapped
    the queue). The work finished inside the window, so no clock the call read gives that number."""
    values = {"ideal": 1000.0, "probe": 2000.0, "async": 1300.0}
    verdict = probe.follows(_Session(values, {**MEASURED, "async": FINISHED}), "units", "copy")
    assert not verdict.passed and verdict.check == "units" and math.isclose(verdict.ratio, 1.3)
    assert "not_read_off_clock" in verdict.message


def test_a_number_below_its_finished_works_rate_or_a_slip_is_left_to_the_checks():
    """Queued work timed (no synchronize before the start clock) reads low: sync_present's; a
    slipped call (a host-link copy) may time work that is not the device's: its owner's."""
    low = {"ideal": 1000.0, "probe": 2000.0, "async": 800.0}
    assert probe.follows(_Session(low, {**MEASURED, "async": FINISHED}), "units", "copy") is None
    high = {**low, "async": 1300.0}
    assert probe.follows(_Session(high, {**MEASURED, "async": FINISHED}), "units", "copy", slipped=True) is None


def test_a_cpu_clock_that_stood_still_while_the_host_slept_reads_its_own_window():
    """wrong/t13_w_cpu_clock_blocking_wait: process_time around a blocking wait, which sleeps; the
    CPU seconds between its readings are fewer than the host's, and its number is their rate:
    read off its own clock (sync_present charges the clock), not a forgery."""
    values = {"ideal": 1000.0, "probe": 2000.0, "async": 4000.0}
    cpu = {**FINISHED, "own_s": 0.25}
    assert probe.follows(_Session(values, {**MEASURED, "async": cpu}), "units", "copy") is None
    assert not probe.follows(_Session(values, {**MEASURED, "async": FINISHED}), "units", "copy").passed


def test_a_correction_within_the_sync_bound_above_every_rate_of_its_window_is_no_measurement():
    """forged/t14_f_correction_only_when_launches_run_ahead: x1.06 only where launches ran ahead,
    under sync_present's bound; above its window's rate and its fastest span's by more than the
    table's tolerance, no clock gives it. good/t13_g_budget_blocks: the median block's rate, above
    the whole window's (its first block ran behind the warm-up) but no faster than its fastest
    block, is read off its window."""
    corrected = {"ideal": 1000.0, "probe": 2000.0, "async": 1060.0}
    verdict = probe.follows(_Session(corrected, {**MEASURED, "async": {**FINISHED, "fastest": GB}}), "units", "copy")
    assert not verdict.passed and "not_read_off_clock" in verdict.message and math.isclose(verdict.ratio, 1.06)
    median = {**corrected, "async": 1030.0}
    blocks = {**FINISHED, "fastest": 1.035 * GB}
    assert probe.follows(_Session(median, {**MEASURED, "async": blocks}), "units", "copy") is None

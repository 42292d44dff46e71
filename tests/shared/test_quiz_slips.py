"""Naming the classic slip behind a wrong number, and saying how far off it is.

Each slip's answer is recomputed here by plain arithmetic from the lesson's numbers (the oracle), not
read back from the drill, so a slip whose arithmetic drifts fails.
"""
import random

import pytest

from shared.quiz import drills, slips
from tests.shared.drills import TOL, find


def named(drill, value):
    """The name of the slip ``value`` matches for ``drill``, or None."""
    slip = slips.match(value, slips.distinct(drill.answer, drill.slips, TOL), TOL)
    return slip.name if slip else None


@pytest.mark.parametrize("value, answer, said", [
    (16, 256, "16x low"), (256, 16, "16x high"), (2.5, 1, "2.5x high"), (1.07, 1, "7% high"),
    (0.97, 1, "3% low"), (1, 1024, "1,024x low"), (1e-9, 1, "1e9x low"), (0, 5, "not a positive number"),
    (-3, 5, "not a positive number"),
])
def test_how_far_off(value, answer, said):
    assert slips.off_by(value, answer) == said


def test_match_takes_the_nearest_slip_within_the_tolerance():
    near, far = slips.Slip("near", 100.0), slips.Slip("far", 104.0)
    assert slips.match(101.0, (far, near), TOL) is near
    assert slips.match(120.0, (far, near), TOL) is None
    assert slips.match(-100.0, (near,), TOL) is None


def test_distinct_drops_slips_that_give_the_right_answer_and_nonsense_and_names_repeats_together():
    kept = slips.distinct(100.0, (slips.Slip("same", 103.0), slips.Slip("a", 50.0), slips.Slip("a again", 50.0),
                                  slips.Slip("nan", float("nan")), slips.Slip("zero", 0.0)), TOL)
    assert [(s.name, s.value) for s in kept] == [("a; or a again", 50.0)]


@pytest.mark.parametrize("value, kept", [(104.9, False), (95.3, False), (105.2, False), (105.6, True),
                                         (94.9, True), (100 / slips.GIB_PER_GB, True), (100 * slips.GIB_PER_GB, True)])
def test_a_slip_is_kept_exactly_when_its_answer_is_wrong_and_the_right_one_is_not_taken_for_it(value, kept):
    """Kept when the slip's answer is outside the tolerance of the right one and the right one outside
    the tolerance of the slip's: the GiB-for-GB slips, 7.4% off, are kept at a 5% tolerance."""
    found = slips.distinct(100.0, (slips.Slip("s", value),), TOL)
    assert bool(found) == kept
    assert not (abs(value - 100) <= TOL * 100) or not found
    if found:
        assert slips.match(100.0, found, TOL) is None


# --- The classic slips of the lesson, each on the lesson's own numbers --------------------------------

LLAMA_8B = dict(layers=32, kv_heads=8, head_dim=128, whole=8.03e9, no_embedding=7.5e9)


def test_per_stream_given_for_total_is_named():
    d = find(drills.batch_total, lambda p: p.startswith("Llama 3.1 8B") and "DGX Spark" in p
             and "64 streams" in p and "1,024 tokens" in p)
    kv = 64 * 1024 * 2 * 32 * 8 * 128 * 2
    step_s = max((15.01e9 + kv) / 273e9, 2 * 7.5e9 * 64 / 125e12)
    assert "per-stream given for the total" in named(d, 1 / step_s)
    assert slips.off_by(1 / step_s, d.answer) == "64x low"


def test_weights_read_per_stream_in_a_batch_is_named():
    d = find(drills.batch_total, lambda p: p.startswith("Llama 3.1 8B") and "DGX Spark" in p
             and "64 streams" in p and "1,024 tokens" in p)
    kv = 64 * 1024 * 2 * 32 * 8 * 128 * 2
    rereads = 64 / max((64 * 15.01e9 + kv) / 273e9, 2 * 7.5e9 * 64 / 125e12)
    assert "the weights read once per stream" in named(d, rereads)


def test_bytes_for_gb_is_named():
    d = find(drills.kv_at_context, lambda p: p.startswith("Llama 3.1 8B") and "serves 8 streams of 32,768" in p)
    in_bytes = 8 * 32768 * 2 * 32 * 8 * 128 * 2
    assert d.answer == pytest.approx(in_bytes / 1e9)
    assert "bytes given for GB" in named(d, in_bytes)
    assert slips.off_by(in_bytes, d.answer) == "1e9x high"


def test_bytes_for_kib_and_the_missing_factor_2_are_named():
    d = find(drills.kv_per_token, lambda p: p.startswith("Llama 3.1 8B") and "bf16" in p)
    assert "bytes given for KiB" in named(d, 2 * 32 * 8 * 128 * 2)
    assert "the factor 2 of K and V left out" in named(d, 32 * 8 * 128 * 2 / 1024)


def test_bits_for_bytes_is_named():
    d = find(drills.decode_ceiling, lambda p: p.startswith("Llama 3.1 8B") and " in bf16 " in p
             and "DGX Spark" in p and "whole checkpoint" in p)
    with_bits = 273e9 / (8.03e9 * 16)
    assert "bits for bytes" in named(d, with_bits)
    assert slips.off_by(with_bits, d.answer) == "8x low"


def test_max_instead_of_min_on_the_roofline_is_named():
    d = find(drills.attainable, lambda p: "DGX Spark" in p and " 16 FLOPs per byte" in p)
    assert d.answer == pytest.approx(273 * 16 / 1000)
    assert "max instead of min" in named(d, 125)


def test_a_wrong_answer_that_matches_no_slip_is_not_named():
    d = find(drills.kv_per_token, lambda p: p.startswith("Llama 3.1 8B") and "bf16" in p)
    assert named(d, d.answer * 3) is None


@pytest.mark.parametrize("kind", drills.KINDS, ids=lambda k: k.__name__)
def test_a_right_answer_is_never_a_slip_and_every_kind_names_some(kind):
    seen = set()
    for seed in range(40):
        d = kind(random.Random(seed))
        kept = slips.distinct(d.answer, d.slips, TOL)
        assert slips.match(d.answer, kept, TOL) is None
        assert all(named(d, s.value) for s in kept)
        seen |= {s.name for s in kept}
    assert seen

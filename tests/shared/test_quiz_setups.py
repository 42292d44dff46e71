"""Every drill is physically possible and its worked answer agrees with its own numbers, over many
seeds (that each worked answer arrives at the drill's answer is tests/shared/test_quiz_drills.py's);
and the card's serving items (streams whose KV caches fit, one user's speed at a batch) are drilled,
against plain arithmetic."""
import math
import random

import pytest

from shared import tables
from shared.quiz import card_drills, drills, serving_drills
from shared.quiz.drill import ROOM, fmt
from tests.shared.drills import TOL, find

SEEDS = range(400)


def model_and_device_named(prompt: str) -> bool:
    """Whether ``prompt`` puts a model of the tables on a device of the tables."""
    return (any(m.name in prompt for m in tables.models().values())
            and any(d.name in prompt for d in tables.devices().values()))


@pytest.mark.parametrize("kind", drills.KINDS, ids=lambda k: k.__name__)
def test_every_drill_puts_its_model_where_it_fits_with_room(kind):
    for seed in SEEDS:
        d = kind(random.Random(seed))
        if model_and_device_named(d.prompt):
            assert d.memory is not None, (kind.__name__, seed, d.prompt)
        if d.memory is not None:
            held, has = d.memory
            assert held <= ROOM * has, (kind.__name__, seed, held / 1e9, has / 1e9, d.prompt)


def test_no_seventy_billion_in_bf16_on_a_40_gb_a100():
    for kind in drills.KINDS:
        for seed in SEEDS:
            prompt = kind(random.Random(seed)).prompt
            assert not ("Llama 3.1 70B in bf16" in prompt and "A100 40GB" in prompt), (kind.__name__, prompt)


def test_the_intensity_answer_says_where_it_sits_against_the_tables_ridges():
    ridges = sorted(dev.ridge_flops_per_byte for dev in tables.devices().values() if dev.ridge_flops_per_byte)
    for seed in SEEDS:
        d = card_drills.intensity(random.Random(seed))
        assert "hundreds of times below" not in d.worked
        if d.answer < ridges[0]:
            assert f"{fmt(ridges[0] / d.answer)}x to {fmt(ridges[-1] / d.answer)}x below every ridge" in d.worked
        elif d.answer >= ridges[-1]:
            assert "at or above every ridge point" in d.worked
        else:
            over = sum(r <= d.answer for r in ridges)
            assert f"at or above the ridge point of {over} of the {len(ridges)} devices" in d.worked, d.worked


def test_256_flops_per_byte_is_above_several_ridges_not_below_them_all():
    d = find(card_drills.intensity, lambda p: p.startswith("Decode at batch 64 ") and "int4" in p)
    assert d.answer == 256 and "below every ridge" not in d.worked and "compute-bound there" in d.worked


# --- The card's serving items ------------------------------------------------------------------

def test_the_streams_whose_caches_fit_are_the_free_memory_over_one_streams_cache():
    d = find(serving_drills.kv_streams_fit, lambda p: p.startswith("Llama 3.1 8B in bf16") and "H100 SXM" in p
             and "8,192 tokens" in p)
    weights = 8_030_261_248 * 2
    one = 2 * 32 * 8 * 128 * 2 * 8192                    # bytes of one stream's cache
    assert d.answer == math.floor((80e9 - weights) / one) == 59
    names = [s.name for s in d.slips]
    assert any("factor 2 of K and V" in n for n in names) and any("weights not taken out" in n for n in names)


def test_one_users_speed_at_a_batch_is_one_token_per_step():
    d = find(serving_drills.per_user_at_batch, lambda p: "RTX 4090" in p and "serves 4 users" in p
             and "1,024 tokens" in p)
    weights, kv = 7_504_924_672 * 2, 4 * 1024 * 131_072
    step = max((weights + kv) / 1008e9, 2 * 7_504_924_672 * 4 / 165e12)
    assert d.answer == pytest.approx(1 / step, rel=1e-12)
    total = next(s for s in d.slips if s.name.startswith("the total given for one user"))
    assert total.value == pytest.approx(4 / step, rel=1e-12)
    assert abs(total.value - d.answer) > TOL * d.answer


def test_the_streams_answer_speaks_of_one_stream_in_the_singular():
    """A cache that leaves room for one stream says '1 whole stream', not '1 whole streams'."""
    ones = [d for d in (serving_drills.kv_streams_fit(random.Random(seed)) for seed in SEEDS) if d.answer == 1]
    assert ones
    for d in ones:
        assert "so 1 whole stream:" in d.worked, d.worked

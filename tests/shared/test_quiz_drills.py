"""Numeric drills: the lesson's own numbers as oracles, and the tolerance as stated."""
import math
import random

import pytest

from shared import tables
from shared.quiz import drills
from tests.shared.drills import TOL, find


def test_spark_llama_8b_bf16_whole_checkpoint_is_the_lessons_17():
    d = find(drills.decode_ceiling, lambda p: p.startswith("Llama 3.1 8B") and " in bf16 " in p
             and "DGX Spark" in p and "whole checkpoint" in p)
    assert d.answer == pytest.approx(273 / 16.06, rel=1e-3)
    assert "273 GB/s ÷ 16.06 GB = 17.0 tokens/s" in d.worked


def test_leaving_out_the_embedding_gives_the_lessons_18():
    d = find(drills.decode_ceiling, lambda p: p.startswith("Llama 3.1 8B") and " in bf16 " in p
             and "DGX Spark" in p and "Leave out the input embedding" in p)
    assert d.answer == pytest.approx(273 / 15.01, rel=1e-3)


def test_moe_ceiling_counts_active_parameters():
    d = find(drills.decode_ceiling, lambda p: p.startswith("Qwen3-30B-A3B") and " in bf16 " in p
             and "DGX Spark" in p and "whole checkpoint" in p)
    assert d.answer == pytest.approx(273e9 / (3_353_032_704 * 2), rel=1e-6)  # about 41 (lesson)
    assert d.reread == "Every way around the wall: mixture of experts"


def test_kv_cache_of_llama_8b_is_128_kib_in_bf16():
    d = find(drills.kv_per_token, lambda p: p.startswith("Llama 3.1 8B") and "bf16" in p)
    assert d.answer == 128
    assert "131,072 B" in d.worked


def test_ridge_point_of_the_spark_is_about_458():
    d = find(drills.ridge_point, lambda p: "DGX Spark" in p)
    assert d.answer == pytest.approx(125e12 / 273e9)


def test_batch_drill_against_plain_arithmetic():
    d = find(drills.batch_total, lambda p: p.startswith("Llama 3.1 8B") and "DGX Spark" in p
             and "64 streams" in p and "1,024 tokens" in p)
    step_bytes = 15.01e9 + 64 * 1024 * 131072
    step_s = max(step_bytes / 273e9, 2 * 7.5e9 * 64 / 125e12)
    assert d.answer == pytest.approx(64 / step_s, rel=2e-3)  # about 740; the lesson's ~700 counts the embedding too


def test_prefill_of_1000_tokens_of_the_8b_at_125_tflops_is_013_s():
    d = find(drills.prefill_time, lambda p: p.startswith("Llama 3.1 8B") and "DGX Spark" in p and "1,000-token" in p)
    assert d.answer == pytest.approx(0.128, abs=0.001)


@pytest.mark.parametrize("kind", drills.KINDS, ids=lambda k: k.__name__)
def test_every_drill_states_a_finite_answer_its_worked_answer_ends_with(kind):
    for seed in range(400):
        d = kind(random.Random(seed))
        assert math.isfinite(d.answer) and d.answer > 0
        assert d.unit in d.prompt or d.unit in d.worked
        whole = d.answer == int(d.answer) and f"{int(d.answer):,} " in d.worked     # a count: "59 streams"
        assert drills.fmt(d.answer) in d.worked or whole
        assert d.reread


@pytest.mark.parametrize("kind", drills.KINDS, ids=lambda k: k.__name__)
def test_tolerance_accepts_within_and_rejects_outside(kind):
    d = kind(random.Random(3))
    assert d.accepts(d.answer, TOL)
    assert d.accepts(d.answer * 1.049, TOL) and d.accepts(d.answer * 0.951, TOL)
    assert not d.accepts(d.answer * 1.06, TOL) and not d.accepts(d.answer * 0.94, TOL)
    assert not d.accepts(d.answer * 2, TOL) and not d.accepts(d.answer / 2, TOL)


def test_same_seed_same_drills_other_seed_other_drills():
    n = len(drills.KINDS)
    a = drills.make(random.Random(11), n)
    assert a == drills.make(random.Random(11), n)
    assert a != drills.make(random.Random(12), n)
    assert {d.reread for d in a} >= {"The KV cache is also bytes", "Prefill is the opposite workload"}


def test_a_session_draws_each_kind_once_before_any_repeats():
    """make() cycles through a shuffled list of the kinds: each prompt is matched to the kind that
    draws it from the same random state."""
    n = len(drills.KINDS)
    rng = random.Random(4)
    made = drills.make(rng, n)
    order = list(drills.KINDS)
    replay = random.Random(4)
    replay.shuffle(order)
    assert [d.prompt for d in made] == [kind(replay).prompt for kind in order]
    assert len({k.__name__ for k in order}) == n


def test_drills_never_use_the_test_config():
    names = {drills.decode_ceiling(random.Random(s)).prompt.split(" (")[0] for s in range(300)}
    assert tables.model("tiny").name not in names
    assert len(names) >= 5

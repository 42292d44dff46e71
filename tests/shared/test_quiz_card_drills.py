"""The interview card's drills (shared/quiz/card_drills.py) against plain arithmetic on the numbers
of the card and of the project's facts (hardware and model tables): each answer is recomputed here
from the raw figures, not read back from the drill, and the slip each drill is about is named."""
import random

import pytest

from shared.quiz import bank, card_drills, slips
from tests.shared.drills import TOL, find

SPARK_GBS, SPARK_TFLOPS = 273, 125           # DGX Spark spec bandwidth, assumed dense bf16 peak
H100_GBS, H100_TFLOPS = 3350, 989            # H100 SXM datasheet
LLAMA_8B_GB = 15.01                          # bf16 weights read per token, input embedding left out
QWEN = dict(total=30_532_122_624, active=3_353_032_704, experts=128, routed=8, layers=48, hidden=2048,
            intermediate=768, vocab=151936)


def named(drill, value):
    """Every slip name ``value`` matches for ``drill``, joined; '' when none."""
    return " | ".join(s.name for s in slips.matches(value, slips.distinct(drill.answer, drill.slips, TOL), TOL))


def test_the_cards_own_example_is_about_43_tokens_per_second():
    d = card_drills.card_ceiling(random.Random(0))
    assert d.answer == pytest.approx(3.0e12 / (70e9 * 1), rel=1e-12)
    assert round(d.answer, 1) == 42.9 and "42.9 tokens/s" in d.worked
    assert "bits for bytes" in named(d, 3.0e12 / (70e9 * 8))
    assert "16-bit weights assumed" in named(d, 3.0e12 / (70e9 * 2))


def test_the_cards_batch_of_32_is_an_upper_bound_near_1371():
    d = card_drills.card_batch(random.Random(0))
    assert d.answer == pytest.approx(32 * 3.0e12 / 70e9, rel=1e-12)
    assert "1,371 tokens/s" in d.worked
    assert "per-stream given for the total" in named(d, 3.0e12 / 70e9)


def test_the_card_example_comes_from_the_bank_with_its_source():
    ex = bank.load().card_example
    assert (ex.params_read, ex.bits_per_weight, ex.bw_gbs, ex.batch) == (70e9, 8, 3000, 32)
    assert "interview card" in ex.source


def test_decode_at_batch_1_in_bf16_does_one_flop_per_byte():
    d = find(card_drills.intensity, lambda p: p.startswith("Decode at batch 1 ") and "bf16" in p)
    assert d.answer == 1.0


def test_intensity_grows_with_the_batch_and_names_the_batch_left_out():
    d = find(card_drills.intensity, lambda p: p.startswith("Decode at batch 64 ") and "int4" in p)
    assert d.answer == 2 * 64 / 0.5
    assert "the batch left out" in named(d, 2 / 0.5)


@pytest.mark.parametrize("device, gbs, tflops", [("DGX Spark", SPARK_GBS, SPARK_TFLOPS),
                                                 ("H100 SXM", H100_GBS, H100_TFLOPS)])
def test_decode_in_bf16_reaches_the_ridge_at_a_batch_equal_to_the_ridge_point(device, gbs, tflops):
    d = find(card_drills.ridge_batch, lambda p: device in p and "Weights in bf16" in p)
    assert d.answer == pytest.approx(tflops * 1e12 / (gbs * 1e9), rel=1e-12)   # 458 on the Spark, 295 on H100


def test_fp8_weights_halve_the_batch_that_reaches_the_ridge():
    d = find(card_drills.ridge_batch, lambda p: "DGX Spark" in p and "Weights in fp8" in p)
    ridge = SPARK_TFLOPS * 1e12 / (SPARK_GBS * 1e9)
    assert d.answer == pytest.approx(ridge / 2, rel=1e-12)
    assert "the ridge point given as the batch" in named(d, ridge)


def test_a_split_that_slices_every_layer_adds_bandwidth():
    d = find(card_drills.split_devices, lambda p: p.startswith("Llama 3.1 8B in bf16") and "2 x NVIDIA DGX Spark" in p
             and "tensor parallel" in p)
    assert d.answer == pytest.approx(2 * SPARK_GBS / LLAMA_8B_GB, rel=1e-3)
    assert "one device's bandwidth" in named(d, SPARK_GBS / LLAMA_8B_GB)


def test_a_split_that_hands_out_layers_in_turn_does_not_speed_up_one_request():
    d = find(card_drills.split_devices, lambda p: p.startswith("Llama 3.1 8B in bf16") and "4 x NVIDIA DGX Spark" in p
             and "pipeline parallel" in p)
    assert d.answer == pytest.approx(SPARK_GBS / LLAMA_8B_GB, rel=1e-3)   # 18.2, as on one Spark
    assert "the bandwidths added" in named(d, 4 * SPARK_GBS / LLAMA_8B_GB)


def test_a_chip_with_more_flops_on_the_same_memory_has_the_same_ceiling():
    d = find(card_drills.bigger_chip, lambda p: "10x the TFLOP/s of the NVIDIA DGX Spark" in p
             and "Llama 3.1 8B in bf16" in p)
    assert d.answer == pytest.approx(SPARK_GBS / LLAMA_8B_GB, rel=1e-3)
    assert "scaled with the FLOP/s" in named(d, 10 * SPARK_GBS / LLAMA_8B_GB)


def test_batch_1_decode_in_bf16_uses_a_fifth_of_a_percent_of_the_sparks_peak():
    d = find(card_drills.peak_fraction, lambda p: "in bf16" in p and "DGX Spark" in p)
    assert d.answer == pytest.approx(100 * 2 * SPARK_GBS * 1e9 / 2 / (SPARK_TFLOPS * 1e12), rel=1e-12)   # 0.218%
    assert "a fraction given for a percentage" in named(d, d.answer / 100)


def test_200_tokens_per_second_of_the_8b_in_bf16_needs_about_3_tb_per_s():
    d = find(card_drills.bandwidth_needed, lambda p: "200 tokens/s from Llama 3.1 8B in bf16" in p)
    assert d.answer == pytest.approx(200 * LLAMA_8B_GB, rel=1e-3)
    assert "TB/s given for GB/s" in named(d, 200 * LLAMA_8B_GB / 1000)
    assert "GiB/s given for GB/s" in named(d, 200 * LLAMA_8B_GB * 1e9 / 2**30)


def test_tokens_per_dollar_follow_bandwidth_per_dollar_not_flops():
    d = find(card_drills.bandwidth_per_dollar, lambda p: p.startswith("Suppose an hour of the NVIDIA H100 SXM")
             and "costs 2x an hour of the NVIDIA DGX Spark" in p)
    assert d.answer == pytest.approx(H100_GBS / SPARK_GBS / 2, rel=1e-12)
    assert "FLOP/s per dollar compared" in named(d, H100_TFLOPS / SPARK_TFLOPS / 2)


def test_active_parameters_set_the_cost_per_token():
    d = find(card_drills.active_params_cost, lambda p: "Llama 3.1 8B (" in p and "against Qwen3-30B-A3B" in p)
    assert d.answer == pytest.approx(8_030_261_248 / QWEN["active"], rel=1e-12)
    assert "total parameters compared" in named(d, 8_030_261_248 / QWEN["total"])


def test_time_per_token_of_the_8b_on_the_spark_is_about_55_ms():
    d = find(card_drills.time_per_token, lambda p: p.startswith("Llama 3.1 8B in bf16") and "DGX Spark" in p)
    assert d.answer == pytest.approx(LLAMA_8B_GB / SPARK_GBS * 1e3, rel=1e-3)   # 1 / 18.2 tokens/s
    assert "seconds given for milliseconds" in named(d, LLAMA_8B_GB / SPARK_GBS)
    assert "tokens/s given for the time per token" in named(d, SPARK_GBS / LLAMA_8B_GB)
    assert "1.074" in named(d, LLAMA_8B_GB / SPARK_GBS * 1e3 * 1e9 / 2**30)


def test_the_measured_bandwidth_gives_a_lower_ceiling():
    d = find(card_drills.measured_ceiling, lambda p: "DGX Spark" in p and "Llama 3.1 8B in bf16" in p)
    assert d.answer == pytest.approx(232 / LLAMA_8B_GB, rel=1e-3)       # reads measured 231-234 GB/s
    assert "the spec bandwidth used" in named(d, SPARK_GBS / LLAMA_8B_GB)


def test_a_batch_of_16_reads_most_of_qwen3s_experts():
    d = find(card_drills.moe_batch, lambda p: p.startswith("Qwen3-30B-A3B in bf16") and "Batch 16," in p)
    per_expert = 3 * QWEN["hidden"] * QWEN["intermediate"]
    shared = QWEN["active"] - QWEN["vocab"] * QWEN["hidden"] - QWEN["layers"] * QWEN["routed"] * per_expert
    union = QWEN["experts"] * (1 - (1 - QWEN["routed"] / QWEN["experts"]) ** 16)
    assert d.answer == pytest.approx((shared + union * QWEN["layers"] * per_expert) * 2 / 1e9, rel=1e-9)
    batch_1 = (QWEN["active"] - QWEN["vocab"] * QWEN["hidden"]) * 2 / 1e9
    assert batch_1 == pytest.approx(6.08, abs=0.005)                    # the lesson's figure without the embedding
    assert "batch 1's bytes" in named(d, batch_1)
    assert d.answer > 6 * batch_1

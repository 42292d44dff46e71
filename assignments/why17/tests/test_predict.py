"""Public tests of task 3 (predict.py): the lesson's own numbers, a few laws, and bad input.

Inputs come from the project's tables (shared/data/*.yml, every row with its source); the
expected values are the numbers the lesson states. The hidden tests use other models and devices.
Run only these:
``pytest assignments/why17/tests/test_predict.py``; every test of task3: ``pytest assignments/why17 -m task3``.
"""
import math

import predict
import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st

from shared import diagnose, tables

pytestmark = pytest.mark.task3
#: The lesson section a failed comparison here points to (conftest.py, shared/diagnose.py);
#: a test marked ``@pytest.mark.lesson(...)`` names its own.
LESSON = 'The Idea'

SPARK = tables.device("spark")
H100 = tables.device("h100")
LLAMA_8B = tables.model("llama-3.1-8b")
QWEN3_MOE = tables.model("qwen3-30b-a3b")
BF16 = tables.weight_format("bf16").bytes_per_weight
FP8 = tables.weight_format("fp8").bytes_per_weight
INT4 = tables.weight_format("int4").bytes_per_weight
Q4_K_M = tables.weight_format("q4_k_m").bytes_per_weight
#: Parameters streamed per token: the whole checkpoint (the lesson's 16.06 GB, 17 tok/s) ...
WHOLE = LLAMA_8B.params_read(whole_checkpoint=True)
#: ... and without the one-row input-embedding lookup (15.01 GB, 18.2 tok/s).
WITHOUT_EMBEDDING = LLAMA_8B.params_read()
KV_8B = LLAMA_8B.kv_bytes_per_token(BF16)

# Plain, bounded inputs for the laws (a deterministic profile: no luck, no deadline).
LAWS = settings(derandomize=True, deadline=None, max_examples=60, database=None,
                phases=[Phase.explicit, Phase.generate, Phase.shrink])
params = st.floats(1e8, 1e12)
bytes_per_weight = st.sampled_from([0.5, 0.6118, 1.0, 2.0, 4.0])
bandwidth = st.floats(10.0, 10_000.0)
peak = st.floats(1.0, 5_000.0)


def approx(expected, slips: dict, **tolerance):
    """``pytest.approx(expected, **tolerance)`` that also carries what the README's named slips
    return here (their words -> the value): a failure names the slip it matches (conftest.py)."""
    compared = pytest.approx(expected, **tolerance)
    compared.slips = slips
    return compared


def reread_weights(p, b, bw, *, batch, context=0, kv=0.0, top=math.inf):
    """(per-stream, total) tokens/s if every stream re-read the weights: the README's slip."""
    step_s = max((batch * p * b + batch * context * kv) / (bw * 1e9), 2 * p * batch / (top * 1e12))
    return 1 / step_s, batch / step_s


# --- The one division (The Idea) -------------------------------------------------------------

def test_spark_whole_checkpoint_is_about_17_tokens_per_s():
    # 273 GB/s / 16.06 GB: the headline number, counting every byte of the bf16 checkpoint.
    assert predict.predict_decode(WHOLE, BF16, SPARK.bw_gbs) == pytest.approx(17.0, abs=0.1)


def test_spark_without_input_embedding_is_about_18_2_tokens_per_s():
    # The embedding is a one-row lookup: 15.01 GB really streams, so the ceiling is higher.
    assert predict.predict_decode(WITHOUT_EMBEDDING, BF16, SPARK.bw_gbs) == pytest.approx(18.2, abs=0.05)


def test_h100_is_about_209_tokens_per_s():
    assert predict.predict_decode(WHOLE, BF16, H100.bw_gbs) == pytest.approx(209, abs=1)


@pytest.mark.lesson('Every way around the wall (fewer bytes per weight)')
def test_halving_the_bytes_doubles_the_speed_17_34_68():
    speeds = [predict.predict_decode(WHOLE, b, SPARK.bw_gbs) for b in (BF16, FP8, INT4)]
    assert speeds == pytest.approx([17.0, 34.0, 68.0], abs=0.2)


@pytest.mark.lesson('Every way around the wall (fewer bytes per weight)')
def test_q4_k_m_file_is_about_55_tokens_per_s():
    assert predict.predict_decode(WHOLE, Q4_K_M, SPARK.bw_gbs) == pytest.approx(55, abs=1)


@pytest.mark.lesson('Every way around the wall (fewer weights per token)')
def test_mixture_of_experts_reads_only_active_params_about_41_tokens_per_s():
    # Qwen3-30B-A3B: about 3.3B of its 30.5B parameters are read per token (6.7 GB in bf16).
    assert predict.predict_decode(QWEN3_MOE.params_read(whole_checkpoint=True), BF16,
                                  SPARK.bw_gbs) == pytest.approx(41, abs=0.5)


def test_interview_card_70b_at_8_bit_on_3_tb_per_s():
    # The interview card's figures: 70e9 parameters, 1 byte each, 3 TB/s.
    assert predict.predict_decode(70e9, 1.0, 3000.0) == pytest.approx(42.9, abs=0.05)


# --- KV cache, intensity, ridge, prefill -----------------------------------------------------

@pytest.mark.lesson('The KV cache is also bytes')
def test_llama_8b_kv_cache_is_128_kib_per_token():
    kv = predict.kv_bytes_per_token(LLAMA_8B.layers, LLAMA_8B.kv_heads, LLAMA_8B.head_dim, BF16)
    assert kv == approx(131_072, {diagnose.KV_WITHOUT_2: 65_536})


@pytest.mark.lesson('The KV cache is also bytes')
def test_kv_cache_without_gqa_would_be_4x():
    gqa = predict.kv_bytes_per_token(LLAMA_8B.layers, LLAMA_8B.kv_heads, LLAMA_8B.head_dim, BF16)
    mha = predict.kv_bytes_per_token(LLAMA_8B.layers, LLAMA_8B.heads, LLAMA_8B.head_dim, BF16)
    assert mha / gqa == pytest.approx(4.0)


@pytest.mark.lesson('Arithmetic intensity: work per byte')
def test_decode_at_batch_1_in_bf16_does_about_1_flop_per_byte():
    # Each weight: one multiply and one add (2 FLOPs) for 2 bytes read.
    assert predict.arithmetic_intensity(2 * WHOLE, WHOLE * BF16) == pytest.approx(1.0)


@pytest.mark.lesson('Arithmetic intensity: work per byte')
def test_spark_ridge_point_is_about_458_flops_per_byte():
    assert predict.ridge_point(SPARK.peak_bf16_tflops, SPARK.bw_gbs) == pytest.approx(458, abs=1)


@pytest.mark.lesson('Prefill is the opposite workload')
def test_prefill_of_1000_tokens_is_about_0_13_s():
    assert predict.prefill_seconds(WHOLE, 1000, SPARK.peak_bf16_tflops) == pytest.approx(0.13, abs=0.005)


@pytest.mark.lesson('Prefill is the opposite workload')
def test_decoding_the_same_1000_tokens_takes_about_a_minute():
    seconds = 1000 / predict.predict_decode(WHOLE, BF16, SPARK.bw_gbs)
    assert seconds == pytest.approx(59, abs=0.5)


# --- The roofline -----------------------------------------------------------------------------

@pytest.mark.lesson('The roofline')
def test_attainable_is_bandwidth_bound_left_of_the_ridge():
    # Decode at 1 FLOP/byte on the Spark: 273 GB/s x 1 FLOP/byte = 0.273 TFLOP/s.
    got = predict.attainable_tflops(1.0, SPARK.peak_bf16_tflops, SPARK.bw_gbs)
    assert got == approx(SPARK.bw_gbs / 1000, {diagnose.MAX_FOR_MIN: SPARK.peak_bf16_tflops})


@pytest.mark.lesson('The roofline')
def test_attainable_is_the_compute_roof_right_of_the_ridge():
    # Prefill of 1,000 tokens: intensity about 1,000, over the ridge.
    got = predict.attainable_tflops(1000.0, SPARK.peak_bf16_tflops, SPARK.bw_gbs)
    assert got == approx(125, {diagnose.MAX_FOR_MIN: SPARK.bw_gbs * 1000.0 / 1000})


@LAWS
@given(bw=bandwidth, top=peak)
def test_the_two_roofs_meet_at_the_ridge_point(bw, top):
    ridge = predict.ridge_point(top, bw)
    assert predict.attainable_tflops(ridge, top, bw) == pytest.approx(top, rel=1e-9)
    assert predict.attainable_tflops(ridge / 2, top, bw) == approx(top / 2, {diagnose.MAX_FOR_MIN: top}, rel=1e-9)
    assert predict.attainable_tflops(ridge * 2, top, bw) == approx(top, {diagnose.MAX_FOR_MIN: 2 * top}, rel=1e-9)


# --- Decode ceiling: batch, context, KV --------------------------------------------------------

def test_batch_1_short_context_matches_the_one_division():
    per_stream, total = predict.decode_ceiling(WHOLE, BF16, SPARK.bw_gbs)
    assert per_stream == pytest.approx(17.0, abs=0.1)
    assert total == pytest.approx(per_stream)


@pytest.mark.lesson('Every way around the wall (batching)')
def test_batch_64_at_1k_context_on_the_spark():
    # Weights are shared by the batch; each stream's KV cache is its own bytes.
    per_stream, total = predict.decode_ceiling(WHOLE, BF16, SPARK.bw_gbs, batch=64, context=1024,
                                               kv_bytes_per_token=KV_8B,
                                               peak_tflops=SPARK.peak_bf16_tflops)
    reread = reread_weights(WHOLE, BF16, SPARK.bw_gbs, batch=64, context=1024, kv=KV_8B,
                            top=SPARK.peak_bf16_tflops)
    assert per_stream == approx(11, {diagnose.REREAD_WEIGHTS: reread[0]}, abs=0.5)
    assert total == approx(700, {diagnose.REREAD_WEIGHTS: reread[1]}, rel=0.03)


@pytest.mark.lesson('The KV cache is also bytes')
def test_128k_context_roughly_halves_the_speed():
    short, _ = predict.decode_ceiling(WHOLE, BF16, SPARK.bw_gbs)
    long_, _ = predict.decode_ceiling(WHOLE, BF16, SPARK.bw_gbs, context=128 * 1024,
                                      kv_bytes_per_token=KV_8B)
    assert long_ / short == pytest.approx(0.5, abs=0.05)


@pytest.mark.lesson('Every way around the wall (batching)')
def test_interview_card_32_streams_share_one_weight_read():
    per_stream, total = predict.decode_ceiling(70e9, 1.0, 3000.0, batch=32)
    reread = reread_weights(70e9, 1.0, 3000.0, batch=32)
    assert per_stream == approx(42.9, {diagnose.REREAD_WEIGHTS: reread[0]}, abs=0.05)
    assert total == approx(1371, {diagnose.REREAD_WEIGHTS: reread[1]}, abs=1)


@pytest.mark.lesson('The roofline; Every way around the wall (batching)')
def test_the_compute_roof_caps_total_throughput():
    # At a batch far past the ridge the step is limited by FLOPs: total = peak / (2 x params).
    _, total = predict.decode_ceiling(WHOLE, BF16, SPARK.bw_gbs, batch=4096,
                                      peak_tflops=SPARK.peak_bf16_tflops)
    assert total == pytest.approx(SPARK.peak_bf16_tflops * 1e12 / (2 * WHOLE), rel=1e-6)


@LAWS
@given(p=params, b=bytes_per_weight, bw=bandwidth)
def test_doubling_bandwidth_doubles_the_ceiling(p, b, bw):
    assert predict.predict_decode(p, b, 2 * bw) == pytest.approx(2 * predict.predict_decode(p, b, bw), rel=1e-9)


@LAWS
@given(p=params, b=bytes_per_weight, bw=bandwidth)
def test_halving_bytes_per_weight_doubles_the_ceiling(p, b, bw):
    assert predict.predict_decode(p, b / 2, bw) == pytest.approx(2 * predict.predict_decode(p, b, bw), rel=1e-9)


@LAWS
@given(p=params, b=bytes_per_weight, bw=bandwidth, top=peak, context=st.integers(0, 200_000))
def test_per_stream_speed_never_rises_with_batch(p, b, bw, top, context):
    speeds = [predict.decode_ceiling(p, b, bw, batch=n, context=context, kv_bytes_per_token=KV_8B,
                                     peak_tflops=top)[0] for n in (1, 2, 4, 8, 16, 32, 64, 128)]
    assert all(later <= earlier * (1 + 1e-12) for earlier, later in zip(speeds, speeds[1:]))


# --- Bad input --------------------------------------------------------------------------------

GOOD = {
    "predict_decode": (WHOLE, BF16, 273.0),
    "kv_bytes_per_token": (32, 8, 128, 2),
    "arithmetic_intensity": (2e9, 2e9),
    "ridge_point": (125.0, 273.0),
    "attainable_tflops": (1.0, 125.0, 273.0),
    "decode_ceiling": (WHOLE, BF16, 273.0),
    "prefill_seconds": (WHOLE, 1000, 125.0),
}
BAD_VALUES = [0, -1.0, math.nan, math.inf]


@pytest.mark.parametrize("bad", BAD_VALUES, ids=["zero", "negative", "nan", "inf"])
@pytest.mark.parametrize("name", sorted(GOOD))
def test_each_positional_argument_rejects_bad_values(name, bad):
    function = getattr(predict, name)
    good = GOOD[name]
    for position in range(len(good)):
        args = list(good)
        args[position] = bad
        with pytest.raises(ValueError):
            function(*args)


def test_decode_ceiling_accepts_empty_context_and_no_compute_roof():
    per_stream, total = predict.decode_ceiling(WHOLE, BF16, 273.0, batch=1, context=0,
                                               kv_bytes_per_token=0.0, peak_tflops=math.inf)
    assert per_stream == pytest.approx(total) == pytest.approx(17.0, abs=0.1)


@pytest.mark.parametrize("keyword, bad", [("batch", 0), ("context", -1), ("kv_bytes_per_token", math.nan),
                                          ("peak_tflops", 0), ("context", math.inf)])
def test_decode_ceiling_rejects_bad_keywords(keyword, bad):
    with pytest.raises(ValueError):
        predict.decode_ceiling(WHOLE, BF16, 273.0, **{keyword: bad})

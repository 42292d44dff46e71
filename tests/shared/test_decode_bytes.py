"""Bytes per decode step: the formula against the tables' sourced totals and against the tensors a
decoder allocates, for every config (built on the meta device, so nothing big is allocated)."""
import pytest
import torch

from shared import tables
from shared.decode import bytes as formula
from shared.decode import config, tensor_bytes
from shared.decode.model import Decoder

CONFIGS = sorted(config.all_configs())
META = torch.device("meta")


def meta_decoder(cfg, *, batch, positions, dtype=torch.bfloat16):
    return Decoder(cfg, batch=batch, max_positions=positions, dtype=dtype, device=META)


@pytest.mark.parametrize("key", CONFIGS)
def test_formula_matches_the_sourced_parameter_counts(key):
    cfg, row = config.from_table(key), tables.model(key)
    assert formula.resident_params(cfg) == row.total_params
    assert formula.weight_params_read(cfg) == row.params_read()


@pytest.mark.parametrize("key", CONFIGS)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("batch,positions", [(1, 1), (1, 513), (4, 2048)])
def test_tensor_count_matches_the_formula(key, dtype, batch, positions):
    cfg = config.from_table(key)
    model = meta_decoder(cfg, batch=batch, positions=positions + 7, dtype=dtype)
    counted = tensor_bytes.step_bytes(model, positions=positions)
    expected = formula.step_bytes(cfg, dtype.itemsize, batch=batch, positions=positions)
    assert counted == expected
    assert tensor_bytes.resident_bytes(model) == formula.resident_params(cfg) * dtype.itemsize
    assert tensor_bytes.cache_bytes(model) == (batch * (positions + 7)
                                               * formula.kv_bytes_per_position(cfg, dtype.itemsize))


@pytest.mark.parametrize("key", [k for k in CONFIGS if config.from_table(k).is_moe])
def test_moe_bytes_follow_the_experts_actually_read(key):
    cfg = config.from_table(key)
    model = meta_decoder(cfg, batch=8, positions=64)
    k, e = cfg.experts_per_token, cfg.experts
    per_layer = [k + (i % (e - k + 1)) for i in range(cfg.layers)]
    counted = tensor_bytes.step_bytes(model, positions=10, experts_read=per_layer)
    expected = formula.step_bytes(cfg, 2, batch=8, positions=10, experts_read=sum(per_layer) / cfg.layers)
    assert counted.weights == pytest.approx(expected.weights, rel=1e-12)
    one_more = formula.step_bytes(cfg, 2, batch=8, positions=10, experts_read=k + 1).weights
    base = formula.step_bytes(cfg, 2, batch=8, positions=10).weights
    assert one_more - base == cfg.layers * formula.expert_params(cfg) * 2


def test_an_moe_step_reads_far_less_than_the_model_holds():
    cfg = config.from_table("qwen3-30b-a3b")
    read = formula.weight_params_read(cfg)
    assert read < formula.resident_params(cfg) / 5


def test_lesson_numbers_for_llama_8b():
    cfg = config.from_table("llama-3.1-8b")
    assert formula.kv_bytes_per_position(cfg, 2) == 131_072  # 128 KiB per token (lesson)
    assert formula.weight_params_read(cfg) * 2 / 1e9 == pytest.approx(15.01, abs=0.01)
    assert formula.resident_params(cfg) * 2 / 1e9 == pytest.approx(16.06, abs=0.01)


def test_expected_experts_at_batch_one_is_experts_per_token_and_grows_to_all():
    cfg = config.from_table("mixtral-8x7b")
    assert formula.expected_experts_read(cfg, 1) == pytest.approx(cfg.experts_per_token)
    seen = [formula.expected_experts_read(cfg, b) for b in (1, 2, 4, 16, 256)]
    assert seen == sorted(seen) and seen[-1] == pytest.approx(cfg.experts)
    with pytest.raises(ValueError, match="not a mixture"):
        formula.expected_experts_read(config.from_table("tiny"), 2)


def test_experts_read_outside_the_possible_range_is_refused():
    cfg = config.from_table("qwen3-30b-a3b")
    for bad in (cfg.experts_per_token - 1, cfg.experts + 1):
        with pytest.raises(ValueError, match="experts_read"):
            formula.layer_params_read(cfg, bad)


def test_config_checks_its_shape():
    base = config.from_table("tiny")
    fields = {k: getattr(base, k) for k in base.__dataclass_fields__}
    with pytest.raises(ValueError, match="multiple of kv_heads"):
        config.DecoderConfig(**{**fields, "kv_heads": 3})
    with pytest.raises(ValueError, match="experts"):
        config.DecoderConfig(**{**fields, "experts": 4})
    with pytest.raises(ValueError, match="hidden"):
        config.DecoderConfig(**{**fields, "hidden": 0})

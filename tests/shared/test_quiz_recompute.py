"""Every drill's answer and its classic slips, worked out again from the drill's own prompt: the
model, device and format it names (looked up in the tables), the numbers it states (checked against
those rows), and plain arithmetic written here, not the quiz's. Every kind, a few hundred seeds each,
seeded, so a drill whose prompt and answer disagree on any seed fails here by name."""
from __future__ import annotations

import math
import random
import re

import pytest

from shared import tables
from shared.quiz import card_drills, drills, serving_drills

SEEDS = range(300)
#: Relative tolerance of a recomputed figure: the same arithmetic in another order.
EXACT = 1e-9


def _named(rows, prompt):
    """The rows whose name the prompt says, longest names first so 'H200' is not read as part of
    another name; each row once."""
    found, rest = [], prompt
    for row in sorted(rows, key=lambda r: len(r.name), reverse=True):
        if row.name in rest:
            found.append((prompt.index(row.name), row))
            rest = rest.replace(row.name, "#")
    return [row for _, row in sorted(found, key=lambda pair: pair[0])]


def model_of(prompt):
    models = [m for m in tables.models().values() if "not a real model" not in m.source]
    (m,) = _named(models, prompt)[:1]
    return m


def devices_of(prompt):
    return _named(list(tables.devices().values()), prompt)


def format_of(prompt):
    return tables.weight_format(re.search(r"\b[Ii]n (bf16|fp8|int4|q4_k_m)\b", prompt).group(1))


def number(pattern, text):
    return float(re.search(pattern, text).group(1).replace(",", ""))


def stated_bw(prompt, d):
    """The bandwidth the prompt states for ``d``, which must be the table's (to its printed digits)."""
    said = number(r"(?:\(|and |\()([\d,.]+) GB/s", prompt)
    assert said == pytest.approx(d.bw_gbs, rel=5e-3), prompt
    return d.bw_gbs


def kv_shape(prompt):
    found = re.search(r"(\d+) layers, (\d+) (?:KV|key/value) heads of (\d+)", prompt)
    layers, heads, dim = (int(g) for g in found.groups())
    return 2 * layers * heads * dim


def step_time(weights, kv, bw, flops, peak):
    return max((weights + kv) / (bw * 1e9), flops / (peak * 1e12))


# --- One recomputation per kind: (answer, {words of a slip's name: the value that slip gives}) -----

def r_decode_ceiling(p):
    m, (d,), f = model_of(p), devices_of(p), format_of(p)
    whole = "whole checkpoint" in p or "(tied)" in p
    params = m.params_read(whole_checkpoint=whole)
    bw = stated_bw(p, d) * 1e9
    return bw / (params * f.bytes_per_weight), {
        "bits for bytes": bw / (params * f.bits_per_weight),
        "bytes per weight left out": bw / params}


def r_kv_per_token(p):
    b = 2 if "bf16" in p else 1
    per = kv_shape(p) * b
    return per / 1024, {"factor 2 of K and V": per / 2 / 1024, "bytes given for KiB": per}


def r_kv_at_context(p):
    batch = int(number(r"serves ([\d,]+) stream", p))
    context = number(r"streams? of ([\d,]+) tokens", p)
    gb = batch * context * kv_shape(p) * 2 / 1e9
    return gb, {"factor 2 of K and V": gb / 2, "per-stream given for the total": gb / batch}


def r_ridge_point(p):
    (d,) = devices_of(p)
    stated_bw(p, d)
    ridge = d.peak_bf16_tflops * 1e12 / (d.bw_gbs * 1e9)
    return ridge, {"upside down": 1 / ridge}


def r_attainable(p):
    (d,) = devices_of(p)
    intensity = number(r"kernel of (\d+) FLOPs per byte", p)
    slope = stated_bw(p, d) * intensity / 1e3
    return min(slope, d.peak_bf16_tflops), {"max instead of min": max(slope, d.peak_bf16_tflops)}


def _serving(p, key="streams"):
    m, (d,) = model_of(p), devices_of(p)
    batch = int(number(rf"(\d+) {key}", p))
    context = number(r"([\d,]+) tokens of context", p)
    assert number(r"([\d,]+) B of KV cache per token", p) == m.kv_bytes_per_token(2), p
    weights, kv = m.params_read() * 2, batch * context * m.kv_bytes_per_token(2)
    flops = 2 * m.params_read() * batch
    bw, peak = stated_bw(p, d), d.peak_bf16_tflops

    def tokens(w, k, compute=True):
        return batch / step_time(w, k, bw, flops if compute else 0, peak)
    return batch, weights, kv, tokens


def r_batch_total(p):
    batch, weights, kv, tokens = _serving(p)
    total = tokens(weights, kv)
    return total, {"per-stream given for the total": total / batch,
                   "weights read once per stream": tokens(batch * weights, kv),
                   "factor 2 of K and V": tokens(weights, kv / 2),
                   "KV cache left out": tokens(weights, 0),
                   "one stream's KV cache": tokens(weights, kv / batch),
                   "compute roof left out": tokens(weights, kv, compute=False)}


def r_per_user_at_batch(p):
    batch, weights, kv, tokens = _serving(p, "users")
    return tokens(weights, kv) / batch, {"total given for one user": tokens(weights, kv),
                                         "weights re-read per stream": tokens(batch * weights, kv) / batch,
                                         "KV cache left out": tokens(weights, 0) / batch}


def r_prefill_time(p):
    m, (d,) = model_of(p), devices_of(p)
    tokens = number(r"([\d,]+)-token prompt", p)
    seconds = 2 * m.total_params * tokens / (d.peak_bf16_tflops * 1e12)
    return seconds, {"the 2 left out": seconds / 2}


def r_kv_streams_fit(p):
    m, (d,), f = model_of(p), devices_of(p), format_of(p)
    assert number(r"\(([\d.]+) GB\)", p) * 1e9 == pytest.approx(d.memory_bytes), p
    context = number(r"holds ([\d,]+) tokens", p)
    per_token = kv_shape(p) * 2
    free = d.memory_bytes - m.total_params * f.bytes_per_weight
    return math.floor(free / (context * per_token)), {
        "factor 2 of K and V": math.floor(free / (context * per_token / 2)),
        "weights not taken out": math.floor(d.memory_bytes / (context * per_token)),
        "one token's cache per stream": math.floor(free / per_token)}


def r_intensity(p):
    batch = number(r"at batch (\d+)", p)
    per_weight = number(r"\(([\d.]+) bytes? each\)", p)
    answer = 2 * batch / per_weight
    return answer, {"multiply-add counted as one": answer / 2, "upside down": 1 / answer}


def r_ridge_batch(p):
    (d,), f = devices_of(p), format_of(p)
    ridge = d.peak_bf16_tflops * 1e12 / (stated_bw(p, d) * 1e9)
    return ridge * f.bytes_per_weight / 2, {"ridge point given as the batch": ridge}


def _per_token_gb(p):
    m, f = model_of(p), format_of(p)
    return m.params_read() * f.bytes_per_weight / 1e9


def r_split_devices(p):
    (d,) = devices_of(p)
    n = number(r"across (\d+) x", p)
    one = stated_bw(p, d) / _per_token_gb(p)
    return (n * one if "tensor parallel" in p else one), {}


def r_bigger_chip(p):
    (d,) = devices_of(p)
    k = number(r"with (\d+)x the TFLOP/s", p)
    one = stated_bw(p, d) / _per_token_gb(p)
    return one, {"scaled with the FLOP/s": k * one}


def r_peak_fraction(p):
    m, (d,) = model_of(p), devices_of(p)
    speed = stated_bw(p, d) / _per_token_gb(p)
    used = 2 * m.params_read() * speed
    return 100 * used / (d.peak_bf16_tflops * 1e12), {}


def r_bandwidth_needed(p):
    target = number(r"must get (\d+) tokens/s", p)
    return target * _per_token_gb(p), {}


def r_bandwidth_per_dollar(p):
    a, b = devices_of(p)
    price = number(r"costs ([\d.]+)x", p)
    answer = a.bw_gbs / b.bw_gbs / price
    return answer, {"price left out": answer * price, "upside down": 1 / answer}


def r_active_params_cost(p):
    dense, moe = (m for m in _named(list(tables.models().values()), p))
    return dense.total_params / moe.active_params, {"total parameters compared": dense.total_params / moe.total_params}


def r_time_per_token(p):
    (d,) = devices_of(p)
    ms = _per_token_gb(p) / stated_bw(p, d) * 1e3
    return ms, {"tokens/s given for the time": 1e3 / ms}


def r_measured_ceiling(p):
    (d,) = devices_of(p)
    measured = number(r"measured ([\d,.]+) GB/s", p)
    assert measured == pytest.approx(d.measured_bw_gbs, rel=5e-3), p
    return d.measured_bw_gbs / _per_token_gb(p), {"spec bandwidth used": d.bw_gbs / _per_token_gb(p)}


def _card(p):
    params = number(r"([\d.]+)B parameters", p) * 1e9
    bits = number(r"([\d.]+)[- ]bit", p)
    bw = number(r"about ([\d.]+) TB/s", p) * 1e12
    return bw / (params * bits / 8)


def r_card_ceiling(p):
    return _card(p), {}


def r_card_batch(p):
    batch = number(r"now (\d+) sequences", p)
    return batch * _card(p), {"per-stream given for the total": _card(p)}


def r_moe_batch(p):
    m, f = model_of(p), format_of(p)
    batch = number(r"Batch (\d+)", p)
    union = m.experts * (1 - (1 - m.experts_per_token / m.experts) ** batch)
    per_expert = number(r"experts of ([\d.]+)M", p) * 1e6
    shared = number(r"([\d.]+)B shared", p) * 1e9
    return (shared + union * m.layers * per_expert) * f.bytes_per_weight / 1e9, {}


#: Recomputations whose inputs the prompt prints rounded (4 significant figures) rather than naming a row.
ROUNDED = {"moe_batch", "card_ceiling", "card_batch"}
RECOMPUTE = {name[2:]: fn for name, fn in list(globals().items()) if name.startswith("r_")}


def test_every_kind_of_drill_is_recomputed_here():
    assert {k.__name__ for k in drills.KINDS} == set(RECOMPUTE)


@pytest.mark.parametrize("kind", drills.KINDS, ids=lambda k: k.__name__)
def test_answer_and_slips_follow_from_the_drills_own_prompt(kind):
    rel = 5e-3 if kind.__name__ in ROUNDED else EXACT
    for seed in SEEDS:
        d = kind(random.Random(seed))
        answer, slips = RECOMPUTE[kind.__name__](d.prompt)
        assert d.answer == pytest.approx(answer, rel=rel), (seed, d.prompt, d.worked)
        for words, value in slips.items():
            named = [s for s in d.slips if words in s.name]
            assert named, (seed, words, [s.name for s in d.slips])
            assert any(s.value == pytest.approx(value, rel=rel) for s in named), \
                (seed, words, value, [(s.name, s.value) for s in named], d.prompt)


def test_a_slip_off_by_one_whole_stream_is_caught():
    # The streams that fit are whole, so the slip of a halved cache is floor(2x), not 2 x floor(x).
    for seed in SEEDS:
        d = serving_drills.kv_streams_fit(random.Random(seed))
        _, slips = r_kv_streams_fit(d.prompt)
        (kv,) = [s for s in d.slips if "factor 2 of K and V" in s.name]
        assert kv.value == slips["factor 2 of K and V"], (seed, kv.value, d.prompt)


def _ridges():
    return sorted(d.ridge_flops_per_byte for d in tables.devices().values() if d.peak_bf16_tflops)


@pytest.mark.parametrize("seed", range(200))
def test_the_intensity_answer_says_where_it_sits_against_the_ridges_truly(seed):
    d = card_drills.intensity(random.Random(seed))
    ridges, x = _ridges(), d.answer
    over = [r for r in ridges if r <= x]
    if not over:
        assert f"{drills.fmt(ridges[0] / x)}x to {drills.fmt(ridges[-1] / x)}x below every ridge" in d.worked
        assert "memory-bound on all" in d.worked
    elif len(over) == len(ridges):
        assert "compute-bound on all" in d.worked
    else:
        assert f"ridge point of {len(over)} of the {len(ridges)} devices" in d.worked
    assert "hundreds of times" not in d.worked

"""One decode benchmark run: check memory, build the decoder, time greedy decode, compare with the
ceiling bandwidth / bytes read per step.

Every stream starts with ``context`` tokens in its KV cache (random K/V: the values do not change
the speed) and generates ``tokens`` more, one per step, by argmax, under ``torch.inference_mode``.
Step ``i`` attends to ``context + i + 1`` positions. The ceiling uses the mean bytes over the
run's steps. Units: bytes, GB = 1e9 bytes, GB/s, seconds, tokens/s.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from shared import devices
from shared.decode import bandwidth, progress, tensor_bytes
from shared.decode import bytes as formula
from shared.decode.config import DecoderConfig
from shared.decode.model import Decoder

DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}
#: Steps run before the clock starts (the first steps pay one-time costs).
WARMUP_STEPS = 2
#: Memory kept free beyond weights and cache, for activations, logits and the allocator:
#: this fraction of weights + cache, plus a fixed amount in bytes.
HEADROOM_FRACTION = 0.10
HEADROOM_BYTES = 256 * 2**20


class DoesNotFit(Exception):
    """The model, its cache and headroom need more memory than the device has free."""


@dataclass(frozen=True)
class Result:
    """What one run measured and computed."""

    cfg: DecoderConfig
    dtype: str
    device: str
    batch: int
    context: int
    tokens: int
    seconds: float                 # timed decode, all steps
    step_bytes: formula.StepBytes  # mean over the run, from the allocated tensors
    formula_bytes: formula.StepBytes  # the same from the formula
    mean_positions: float          # positions attended per stream, mean over steps
    experts_read: float | None     # distinct experts per MoE layer per step, mean; None if dense
    bw: bandwidth.Bandwidth | None  # measured in this run; None when given
    bw_gbs: float                  # the bandwidth the ceiling uses: the copy figure, as the lab's measured_bandwidth

    @property
    def tokens_per_s(self) -> float:
        """Measured tokens/s of one stream."""
        return self.tokens / self.seconds

    @property
    def ceiling_tokens_per_s(self) -> float:
        """Tokens/s of one stream if each step took exactly its bytes / bandwidth."""
        return self.bw_gbs * 1e9 / self.step_bytes.total

    @property
    def fraction_of_ceiling(self) -> float:
        """Measured / ceiling (1.0 = 100%)."""
        return self.tokens_per_s / self.ceiling_tokens_per_s

    @property
    def bytes_agree(self) -> bool:
        """Tensor count and formula agree to within rounding (1e-9 relative)."""
        a, b = self.step_bytes.total, self.formula_bytes.total
        return abs(a - b) <= 1e-9 * max(a, b)


def memory_needed(cfg: DecoderConfig, dtype: str, *, batch: int, positions: int) -> tuple[float, float]:
    """(weights, KV cache) bytes the decoder allocates for ``batch`` streams of ``positions``."""
    size = DTYPES[dtype].itemsize
    weights = formula.resident_params(cfg) * size
    cache = batch * positions * formula.kv_bytes_per_position(cfg, size)
    return weights, cache


def check_fits(cfg: DecoderConfig, dtype: str, device: torch.device, *, batch: int, positions: int,
               extra: float = 0) -> None:
    """Raise DoesNotFit (one line) unless weights + cache + headroom + ``extra`` bytes (the
    bandwidth buffers) fit in free device memory."""
    weights, cache = memory_needed(cfg, dtype, batch=batch, positions=positions)
    need = (weights + cache) * (1 + HEADROOM_FRACTION) + HEADROOM_BYTES + extra
    free = devices.free_bytes(device)
    if need > free:
        raise DoesNotFit(
            f"{cfg.key} in {dtype} needs {need / 1e9:.1f} GB on {device.type} (weights "
            f"{weights / 1e9:.1f} GB + KV cache {cache / 1e9:.2f} GB + headroom and bandwidth buffers) "
            f"but only {free / 1e9:.1f} GB is free; try a smaller --model, --dtype, --batch or --context")


def run(cfg: DecoderConfig, *, dtype: str = "bf16", device=None, batch: int = 1, context: int = 512,
        tokens: int = 64, bw_gbs: float | None = None, seed: int = 0, threads: int | None = None,
        report_to: progress.Progress | None = None) -> Result:
    """Benchmark greedy decode of ``tokens`` tokens per stream after ``context`` cached ones.

    ``threads`` sets torch's CPU threads for the whole process (bandwidth and decode alike).
    ``report_to`` shows each phase's progress (shared/decode/progress.py); None: silent.
    """
    shown = report_to if report_to is not None else progress.Silent()
    device = devices.resolve(device)
    if threads is not None:
        torch.set_num_threads(threads)
    positions = context + tokens
    size = DTYPES[dtype].itemsize
    working_set = formula.step_bytes(cfg, size, batch=batch, positions=context + tokens // 2 + 1).total
    buffer = 0 if bw_gbs is not None else bandwidth.buffer_bytes(device, working_set)
    check_fits(cfg, dtype, device, batch=batch, positions=positions, extra=2 * buffer)
    shown.note(f"{cfg.key} in {dtype} on {device.type}, batch {batch}: "
               + ("measure the bandwidth, " if bw_gbs is None else "")
               + f"fill {formula.resident_params(cfg) * size / 1e9:.2f} GB of weights, decode "
               f"{min(WARMUP_STEPS, tokens)} warm-up + {tokens} timed steps"
               + (", measure the bandwidth again" if bw_gbs is None else "")
               + " (progress on stderr, results on stdout)")
    meter = None
    if bw_gbs is None:
        meter = bandwidth.Meter(device, buffer)
        _measure(meter, shown, "bandwidth before the decode")

    torch.manual_seed(seed)
    model = Decoder(cfg, batch=batch, max_positions=positions, dtype=DTYPES[dtype], device=device)
    phase = shown.phase("weights", model.randomize_units(context), "tensors")
    model.randomize(seed, context=context, tick=phase.advance)
    phase.finish()
    phase = shown.phase("decode", min(WARMUP_STEPS, tokens) + tokens, "steps")
    seconds = _timed_decode(model, device, context=context, tokens=tokens, meter=meter, tick=phase.advance)
    phase.finish()
    counted, by_formula, experts = _bytes_per_step(model, size, context=context, tokens=tokens)
    del model
    if meter is not None:
        _measure(meter, shown, "bandwidth after the decode")
        meter.close()
    return Result(
        cfg=cfg, dtype=dtype, device=str(device), batch=batch, context=context, tokens=tokens,
        seconds=seconds, step_bytes=_mean(counted), formula_bytes=_mean(by_formula),
        mean_positions=context + (tokens + 1) / 2,
        experts_read=(sum(experts) / tokens) if cfg.is_moe else None,
        bw=meter.result() if meter else None,
        bw_gbs=bw_gbs if bw_gbs is not None else meter.result().ceiling_gbs)


def _measure(meter: bandwidth.Meter, shown, name: str) -> None:
    phase = shown.phase(name, meter.full_units(), "runs")
    meter.full(tick=phase.advance)
    phase.finish()


def _timed_decode(model: Decoder, device: torch.device, *, context: int, tokens: int,
                  meter: bandwidth.Meter | None, tick=None) -> float:
    """Seconds for ``tokens`` greedy steps from position ``context``, after WARMUP_STEPS untimed ones.

    Each step is timed on its own (the device synchronized around it); between steps, outside the
    clock, ``meter`` samples the bandwidth under the same load. ``tick`` (optional) is called after
    every step, warm-up steps included, outside the clock.
    """
    tick = tick or (lambda: None)
    seconds = 0.0
    with torch.inference_mode():
        tok = torch.randint(0, model.cfg.vocab, (model.batch,), device=device)
        for i in range(min(WARMUP_STEPS, tokens)):
            tok = model.step(tok, context + i)
            tick()
        for moe in model.moe_layers():
            moe.experts_read.clear()
        for i in range(tokens):
            devices.synchronize(device)
            start = time.perf_counter()
            tok = model.step(tok, context + i)
            devices.synchronize(device)
            seconds += time.perf_counter() - start
            if meter is not None:
                meter.sample()
            tick()
    return seconds


def _bytes_per_step(model: Decoder, size: int, *, context: int, tokens: int):
    """Per timed step: bytes from the tensors, bytes from the formula, mean experts read per layer."""
    moe = model.moe_layers()
    counted, by_formula, experts = [], [], []
    for i in range(tokens):
        per_layer = [layer.experts_read[i] for layer in moe] or None
        mean_experts = sum(per_layer) / len(per_layer) if per_layer else None
        counted.append(tensor_bytes.step_bytes(model, positions=context + i + 1, experts_read=per_layer))
        by_formula.append(formula.step_bytes(model.cfg, size, batch=model.batch, positions=context + i + 1,
                                             experts_read=mean_experts))
        experts.append(mean_experts)
    return counted, by_formula, experts


def _mean(steps: list[formula.StepBytes]) -> formula.StepBytes:
    n = len(steps)
    return formula.StepBytes(weights=sum(s.weights for s in steps) / n,
                             embedding_rows=sum(s.embedding_rows for s in steps) / n,
                             kv_cache=sum(s.kv_cache for s in steps) / n)


def report(r: Result) -> str:
    """The run as a few aligned lines: what was read, the ceiling, the measurement, the ratio."""
    b, f = r.step_bytes, r.formula_bytes
    lines = [
        f"model        {r.cfg.name} ({r.cfg.key}), {r.dtype}, batch {r.batch}, context {r.context}, "
        f"{r.tokens} tokens, {r.device}",
        f"bytes/step   weights {b.weights / 1e9:.4f} GB + embedding rows {b.embedding_rows / 1e3:.1f} kB "
        f"+ KV cache {b.kv_cache / 1e6:.2f} MB at {r.mean_positions:g} positions (mean over the run)",
        f"             = {b.total / 1e9:.4f} GB from the allocated tensors, "
        f"{f.total / 1e9:.4f} GB from the formula ({'agree' if r.bytes_agree else 'DISAGREE'})",
    ]
    if r.experts_read is not None:
        lines.append(f"experts      {r.experts_read:.2f} of {r.cfg.experts} read per layer per step "
                     f"(experts_per_token {r.cfg.experts_per_token}; uniform routing at batch {r.batch} "
                     f"would read {formula.expected_experts_read(r.cfg, r.batch):.2f})")
    if r.bw is None:
        lines.append(f"bandwidth    {r.bw_gbs:.2f} GB/s (given with --bw-gbs)")
    else:
        lines.append(f"bandwidth    {r.bw_gbs:.2f} GB/s measured in this run: a copy counting read + write, "
                     f"as the lab's measured_bandwidth ({r.bw.buffer_bytes / 2**20:.0f} MiB buffer)")
    lines += [
        f"ceiling      {r.ceiling_tokens_per_s:.2f} tokens/s per stream = {r.bw_gbs:.2f} GB/s / "
        f"{b.total / 1e9:.4f} GB",
        f"measured     {r.tokens_per_s:.2f} tokens/s per stream ({r.tokens_per_s * r.batch:.2f} in total), "
        f"{r.seconds:.3f} s for {r.tokens} steps",
        f"% of ceiling {100 * r.fraction_of_ceiling:.1f}%",
    ]
    if r.bw is not None:
        read_ceiling = r.bw.read_gbs * 1e9 / b.total
        lines.append(f"read-only    {r.bw.read_gbs:.2f} GB/s (a sum and a matrix-vector pass) gives a ceiling of "
                     f"{read_ceiling:.2f} tokens/s, {100 * r.tokens_per_s / read_ceiling:.1f}% of it: decode mostly "
                     f"reads, and a CPU copy also reads its destination before writing it, so the copy figure "
                     f"can sit below the read one; the Measure table uses the copy figure")
    return "\n".join(lines)

"""A download-free decode benchmark: a Llama-architecture decoder with random weights.

Modules, one concept each:

- ``config``: the decoder's shape, built from a model row of ``shared.tables``.
- ``bytes``: bytes read per decode step by formula (weights actually read + KV cache), and the
  ceiling that follows from a bandwidth; no torch needed, so the quiz uses it too.
- ``model``: the decoder in PyTorch (GQA, RMSNorm, SwiGLU, rotary embeddings, a preallocated KV
  cache, mixture-of-experts layers that read only the routed experts).
- ``ceiling``: the lesson's ceilings on table rows (tokens/s, batching, prefill), shared with the quiz.
- ``tensor_bytes``: the same bytes counted from the tensors the decoder allocated.
- ``bandwidth``: the memory bandwidth measured in the same run.
- ``bench``: one benchmark run (memory check, warm-up, timed greedy decode, report).
- ``cli``: ``python -m shared.decode_bench``.
"""

"""The decoder's shape, taken from a model row of ``shared.tables`` (whose ``Shape`` declares and
checks it), and the constants that change no byte and no timing."""
from __future__ import annotations

import dataclasses

from shared import tables

#: Rotary base. It changes the angles, never the bytes or the time of a step
#: (Llama 3 configs use 500000, Mixtral and Qwen3 1e6), so one value serves every config.
ROPE_THETA = 500_000.0

#: RMSNorm epsilon (1e-5 in Llama 3's config.json); it changes no byte and no timing.
NORM_EPS = 1e-5


#: Everything the decoder needs to allocate its tensors: a model's shape (shared/tables.py).
DecoderConfig = tables.Shape


def from_table(name: str) -> DecoderConfig:
    """The decoder config of the model ``name`` in ``shared/data/models.yml`` (KeyError if unknown)."""
    row = tables.model(name)
    return from_model(row)


def from_model(row: tables.Model) -> DecoderConfig:
    """The decoder config of one ``tables.Model`` row: its shape alone."""
    return DecoderConfig(**{f.name: getattr(row, f.name) for f in dataclasses.fields(DecoderConfig)})


def all_configs() -> dict[str, DecoderConfig]:
    """Every model in the tables, 'tiny' included, by key."""
    return {key: from_model(row) for key, row in tables.models().items()}

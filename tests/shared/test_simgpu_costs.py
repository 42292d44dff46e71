"""What one kernel reads and writes of a tensor: the span of its elements' bytes in their storage
and the bytes it moves, for every layout a view can have (slices, transposes, expanded and empty
dimensions), checked against the elements' own addresses."""
from __future__ import annotations

import itertools
import math

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.simgpu import costs

_dims = st.lists(st.tuples(st.integers(0, 4), st.integers(0, 6)), max_size=4)


def _addresses(shape, strides, offset: int) -> list[int]:
    """The element offsets of a view, one per index."""
    return [offset + sum(i * s for i, s in zip(index, strides, strict=True))
            for index in itertools.product(*(range(n) for n in shape))]


@settings(max_examples=300, deadline=None, derandomize=True, database=None)
@given(dims=_dims, offset=st.integers(0, 5), dtype=st.sampled_from([torch.uint8, torch.float32, torch.float64]))
def test_layout_spans_the_elements_bytes_and_counts_an_expanded_dimension_once(dims, offset, dtype):
    shape, strides = [n for n, _s in dims], [s for _n, s in dims]
    size = torch.empty((), dtype=dtype).element_size()
    storage = torch.zeros(offset + 1 + sum((n - 1) * s for n, s in dims if n > 0), dtype=dtype)
    t = storage.as_strided(shape, strides, offset)
    where = _addresses(shape, strides, offset)
    start, end, moved = costs.layout(t)
    if not where:
        assert (start, end, moved) == (offset * size, offset * size, 0)
        return
    assert (start, end) == (min(where) * size, (max(where) + 1) * size)
    assert moved == math.prod(n for n, s in dims if s != 0) * size
    assert costs.byte_range(t) == (start, end) and costs.nbytes(t) == moved


def test_a_row_of_a_transposed_matrix_spans_from_its_first_to_its_last_element():
    m = torch.zeros(4, 6, dtype=torch.float32).t()       # 6 x 4, strides (1, 6)
    assert costs.layout(m[2]) == (2 * 4, (2 + 3 * 6 + 1) * 4, 4 * 4)

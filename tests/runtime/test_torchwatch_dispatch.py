"""A watched call is recorded at torch's dispatcher: the same work reads the same however the
Python spelled it, views and allocations cost nothing, and bytes written are told from bytes read
(an index read alongside a copy is not the copy's size)."""
from __future__ import annotations

import warnings

import pytest

from autograder.runtime import torchwatch

torch = pytest.importorskip("torch")

N = 24
A = torch.rand(N, N, dtype=torch.float64)
B = torch.rand(N, N, dtype=torch.float64)
SPELLINGS = {
    "@": lambda: A @ B,
    "linalg.matmul": lambda: torch.linalg.matmul(A, B),
    "linalg.multi_dot": lambda: torch.linalg.multi_dot([A, B]),
    "chain_matmul": lambda: torch.chain_matmul(A, B),
    "einsum": lambda: torch.einsum("ik,kj->ij", A, B),
    "tensordot": lambda: torch.tensordot(A, B, dims=([1], [0])),
    "F.linear": lambda: torch.nn.functional.linear(A, B.T),
}


def _work(ops: list) -> list:
    """(bytes read, bytes written, FLOPs, count) of each op that did work."""
    return sorted((op["read_bytes"], op["written_bytes"], op["flops"], op["count"]) for op in ops)


def _watched(call, *, inference: bool = False) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # chain_matmul's deprecation
        with torch.inference_mode(inference), torchwatch.TorchWatch() as watch:
            call()
    return watch.summary()


@pytest.mark.parametrize("inference", [False, True], ids=["autograd", "inference_mode"])
@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_every_spelling_of_one_matmul_is_one_product_of_2n3_flops(spelling, inference):
    size = N * N * 8
    assert _work(_watched(SPELLINGS[spelling], inference=inference)) == [(2 * size, size, 2.0 * N**3, 1)]


def test_views_and_allocations_are_silent_and_a_fill_reads_nothing():
    src = torch.ones(4096, dtype=torch.uint8)
    ops = _watched(lambda: (src.view(64, 64), src[:100], torch.empty(4096), torch.zeros(1000, dtype=torch.uint8)))
    assert [(op["op"], op["read_bytes"], op["written_bytes"]) for op in ops] == [("zeros", 0, 1000)]


def test_an_index_copy_writes_the_buffer_and_reads_its_index_beside_the_source():
    src, dst = torch.ones(1000, dtype=torch.uint8), torch.empty(1000, dtype=torch.uint8)
    index = torch.arange(1000)
    (op,) = _watched(lambda: dst.index_copy_(0, index, src))
    assert (op["op"], op["written_bytes"], op["read_bytes"]) == ("index_copy_", 1000, 1000 + 8 * 1000)
    assert op["dtypes"] == ["int64", "uint8", "uint8"]

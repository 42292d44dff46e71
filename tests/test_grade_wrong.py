"""Every hidden check is proven: a submission with one classic mistake fails exactly the checks
named here, and every other check its change can reach still passes.

Each folder in autograder/lessons/why17/fixtures/wrong/ holds the one file that differs from the reference.
"""
from __future__ import annotations

import pytest

from autograder.grading.grade import grade_submission
from autograder.lessons.why17.fixtures import build

#: Submission -> the checks it must fail (and no others among the checks its file can reach).
EXPECTED = {
    # predict.py
    "decode_forgets_1e9": {"decode_moe_active", "decode_quantized", "law_batch1_is_predict"},
    "kv_without_2": {"kv_bytes_gqa"},
    "attainable_max": {"attainable_two_roofs", "law_roofline_min", "law_ridge_meets"},
    "ceiling_ignores_kv": {"ceiling_kv_cache", "law_context_costs", "ceiling_batch_shares_weights"},
    "ceiling_ignores_compute": {"ceiling_compute_roof", "law_compute_roof_caps", "ceiling_batch_shares_weights"},
    "kv_read_batch_squared": {"ceiling_kv_cache", "law_context_costs", "law_total_never_falls",
                              "ceiling_batch_shares_weights"},
    "no_valueerror_on_nan": {"errors_predict_decode"},
    "prefill_no_2": {"prefill_time"},
    "decode_clamps_bandwidth": {"law_bandwidth_doubles", "law_batch1_is_predict"},
    "decode_whole_bytes": {"decode_quantized", "law_batch1_is_predict", "law_bytes_halve"},
    "kv_counts_embedding_layer": {"kv_bytes_gqa", "law_kv_linear"},
    "ceiling_swapped_pair": {"ceiling_compute_roof", "ceiling_kv_cache", "law_per_stream_never_rises",
                             "law_total_never_falls", "ceiling_batch_shares_weights"},
    # refusing a valid 0 makes every law that uses the default context fail too
    "ceiling_rejects_zero_context": {"errors_decode_ceiling", "ceiling_compute_roof", "law_batch1_is_predict",
                                     "law_compute_roof_caps", "law_per_stream_never_rises", "law_total_never_falls",
                                     "ceiling_batch_shares_weights"},
    "predict_no_validation": {f"errors_{f}" for f in ("predict_decode", "kv_bytes_per_token", "arithmetic_intensity",
                                                      "ridge_point", "attainable_tflops", "decode_ceiling",
                                                      "prefill_seconds")},
    # the reference roofline.py draws with ridge_point, but task4 then runs it with the reference's
    # predict.py (autograder/grading/fallback.py): one mistake, one charge
    "ridge_in_gflops": {"intensity_and_ridge", "law_ridge_meets"},
    # the batching misconception: every stream re-reads the weights
    "ceiling_rereads_weights": {"ceiling_batch_shares_weights", "ceiling_kv_cache", "ceiling_compute_roof",
                                "law_context_costs"},
    # bw.py
    # a units slip (bytes/s) is charged once, by the simulated GPU's units_gb_per_s
    # (tests/test_gpu_checks.py), not again by the CPU's plausibility bound nor in the sweep
    "bw_bytes_per_s": set(),
    "bw_returns_tensor": {"bw_returns_gbs"},
    "bw_ignores_iters": {"bw_honours_args"},
    "bw_fixed_buffer": {"bw_honours_args"},
    "bw_no_validation": {"bw_rejects_bad"},
    "sweep_keys_in_bytes": {"bw_sweep_sizes"},
    # flops.py
    "flops_ignores_dtype": {"flops_honours_args"},
    "flops_ignores_iters": {"flops_honours_args"},
    # a units slip (FLOP/s) is charged once, by the simulated GPU's flops_counted_2n3
    # (tests/test_gpu_checks.py), not again by the CPU checks, whatever the grading CPU's speed
    "flops_per_s": set(),
    "flops_gflops": set(),
    # a negative time: matmul_tflops's number, and measured_peak_tflops's through it
    "flops_clock_reversed": {"flops_returns_tflops", "flops_peak_plausible"},
    "peak_returns_dict": {"flops_peak_plausible"},
    "flops_no_validation": {"flops_rejects_bad"},
    # roofline.py
    "roofline_linear_axes": {"roofline_loglog"},
    "roofline_unlabelled_axes": {"roofline_axis_labels"},
    "roofline_slope_no_1000": {"roofline_roofs_meet"},
    "roofline_ridge_unmarked": {"roofline_ridge_marked"},
    "roofline_workloads_at_peak": {"roofline_workloads"},
    "roofline_workloads_unnamed": {"roofline_workloads"},
    "batch_curve_unlabelled": {"batch_curve_lines", "batch_curve_values"},
    "batch_curve_swapped": {"batch_curve_values"},
}

def test_every_wrong_submission_is_listed():
    on_disk = {p.name for p in (build.HERE / "wrong").iterdir() if p.is_dir()}
    assert on_disk == set(EXPECTED)


def test_every_check_of_mine_is_proven_by_a_wrong_submission():
    proven = set().union(*EXPECTED.values())
    assert set(build.my_checks()) - proven == set()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_wrong_submission_fails_exactly_its_checks(name, tmp_path):
    folder = build.overlay("wrong", name, tmp_path / name)
    reachable = build.checks_touching(build.changed_modules("wrong", name))
    assert EXPECTED[name] <= reachable
    results = grade_submission(folder, device="cpu", only=reachable)
    assert {t["check"] for t in results["tests"]} == reachable
    assert build.failed(results) == EXPECTED[name]
    for check_id in EXPECTED[name]:
        message = build.outputs(results)[check_id]
        assert len(message.splitlines()) <= 3, message
        # a lesson section to reread, or (for a refused valid argument) what the function raised
        assert "Reread:" in message or "raised" in message, message


def test_same_submission_same_results(tmp_path):
    """A failing law reports the same case every time: the first of its table that fails."""
    folder = build.overlay("wrong", "ceiling_swapped_pair", tmp_path / "s")
    only = {"law_per_stream_never_rises", "law_total_never_falls", "errors_decode_ceiling"}
    first, second = (grade_submission(folder, device="cpu", only=only)["tests"] for _ in range(2))
    assert first == second
    assert [t["status"] for t in first] == ["passed", "failed", "failed"]

"""What each wrong submission of why17's fixtures must fail: the tables the lesson's proofs grade
against (test_grade_wrong.py, test_gpu_checks.py, test_calibrate.py) and the class summary's tests
(tests/reports/test_batch_outputs.py) read.

Adding a wrong submission: list the checks it must fail here (docs/maintaining.md).
"""
from __future__ import annotations

#: autograder/lessons/why17/fixtures/wrong/<name> -> the checks it must fail (and no others among
#: the checks its file can reach).
EXPECTED = {
    # predict.py
    "decode_forgets_1e9": {"decode_moe_active", "decode_quantized", "law_batch1_is_predict"},
    "kv_without_2": {"kv_bytes_gqa"},
    "attainable_max": {"attainable_two_roofs", "law_roofline_min", "law_ridge_meets"},
    "ceiling_ignores_kv": {"ceiling_kv_cache", "law_context_costs", "ceiling_batch_shares_weights"},
    "ceiling_nan_when_batched": {"ceiling_batch_shares_weights", "ceiling_compute_roof", "ceiling_kv_cache",
                                 "errors_decode_ceiling", "law_compute_roof_caps", "law_context_costs",
                                 "law_per_stream_never_rises", "law_total_never_falls"},
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
    # (tests/lessons/why17/test_gpu_checks.py), not again by the CPU's plausibility bound nor in the sweep
    "bw_bytes_per_s": set(),
    "bw_returns_tensor": {"bw_returns_gbs"},
    "bw_ignores_iters": {"bw_honours_args"},
    "bw_fixed_buffer": {"bw_honours_args"},
    # judged between the clock readings: the timed copies' count against the number (the warm-ups
    # counted in)
    "bw_counts_warmup": {"bw_honours_args"},
    # a smaller buffer copied once per reported copy is the simulated GPU's to charge, once
    # (buffer_exceeds_cache.copy_bandwidth, docs/simulated-gpu.md row 2a), not the CPU check's
    "bw_half_buffer_timed": set(),
    "bw_no_validation": {"bw_rejects_bad"},
    "sweep_keys_in_bytes": {"bw_sweep_sizes"},
    # flops.py
    "flops_ignores_dtype": {"flops_honours_args"},
    "flops_ignores_iters": {"flops_honours_args"},
    # iters - 1 matmuls timed, iters counted: the number overstates the timed work by a factor
    # that changes with iters
    "flops_timed_off_by_one": {"flops_honours_args"},
    # a units slip (FLOP/s) is charged once, by the simulated GPU's flops_counted_2n3
    # (tests/lessons/why17/test_gpu_checks.py), not again by the CPU checks, whatever the grading CPU's speed
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

#: autograder/lessons/why17/fixtures/gpu/<name> -> (the one check it must fail, words its message
#: must contain).
WRONG = {
    "wrong_no_sync": ("sync_present", "Forget to synchronize"),
    "wrong_events_no_sync": ("sync_present", "Both events must be completed"),
    "wrong_no_sync_before_start": ("sync_present", "Synchronize before starting the clock"),
    "wrong_side_stream": ("sync_present", "the clock stopped before the device finished"),
    "wrong_sweep_no_sync": ("sync_present.bandwidth_sweep", "Forget to synchronize"),
    "wrong_flops_no_sync": ("sync_present.matmul_tflops", "Forget to synchronize"),
    "wrong_float32_elements": ("bytes_counted_twice", "your buffers are 4x the n_bytes"),
    "wrong_measured_max_sweep": ("buffer_exceeds_cache", "faster than this device can move bytes: the buffer "
                                 "sat in the L2, or the clock was read before the GPU finished"),
    "wrong_flops_no_warmup": ("warmup_present.matmul_tflops", "warm up"),
    "wrong_peak_float32": ("within_peak", "ridge point"),
    "wrong_bytes_once": ("bytes_counted_twice", "counted the bytes once"),
    "wrong_tiny_measured": ("buffer_exceeds_cache", "Tiny buffers"),
    "wrong_ignores_n_bytes": ("buffer_exceeds_cache.copy_bandwidth", "ignores n_bytes"),
    "wrong_tiny_chunks": ("buffer_exceeds_cache.copy_bandwidth", "cache cliff"),
    # measured_bandwidth times the same capped copies: charged once, on copy_bandwidth, whether or
    # not the seeded device's L2 holds them (test_gpu_checks.py grades it under several secrets)
    "wrong_fixed_8mib": ("buffer_exceeds_cache.copy_bandwidth", "when asked for"),
    "wrong_no_warmup": ("warmup_present", "warm up"),
    "wrong_flops_n3": ("flops_counted_2n3", "counted n**3 FLOPs"),
    "wrong_units_bytes_per_s": ("units_gb_per_s", "bytes per second"),
    "wrong_units_gib": ("units_gb_per_s", "GiB/s"),
    "wrong_units_mb": ("units_gb_per_s", "MB/s"),
    "wrong_units_ms_as_s": ("units_gb_per_s", "milliseconds used as seconds"),
}

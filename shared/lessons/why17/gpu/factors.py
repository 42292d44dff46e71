"""What explains a ratio of the student's number to the reference's, in the lesson's words.

A ratio within ``shared.simgpu.ratios.RATIO_TOLERANCE`` of a count factor times a unit factor is
explained by those two slips (``shared.simgpu.ratios.explain``). The simulated checks and the
real-GPU tier (autograder/lessons/why17/realgpu.py) name slips from these tables.
"""
from __future__ import annotations

#: Byte-count factors: student / reference when only the byte count is off.
BYTE_FACTORS = {0.5: "you counted the bytes once; a copy reads n_bytes and writes n_bytes",
                1.0: "",
                2.0: "you counted 4·n_bytes per copy; a copy reads n_bytes and writes n_bytes, 2·n_bytes in all"}
#: Units factors for GB/s: student / reference when only the unit is off.
GBS_UNITS = {
    1.0: "",
    1e9: "bytes per second, not GB/s (1e9 bytes/s)",
    1e6: "kB/s, not GB/s",
    1e3: "MB/s, not GB/s",
    1e-3: "TB/s instead of GB/s, or milliseconds used as seconds (Event.elapsed_time returns ms)",
    1e-6: "time in microseconds used as seconds",
    1e-9: "time in nanoseconds used as seconds (perf_counter_ns)",
    1e9 / 2**30: "GiB/s (2**30 bytes) instead of GB/s (1e9 bytes)",
    1e9 / 2**20: "MiB/s instead of GB/s",
    1e9 / 2**40: "TiB/s instead of GB/s",
    8.0: "gigabits per second, not gigabytes",
}
#: FLOP-count factors: student / reference when only the FLOP count is off.
FLOP_FACTORS = {0.5: "you counted n**3 FLOPs; each of the n**3 multiply-adds is 2 FLOPs, 2·n**3 in all",
                1.0: "", 2.0: "you counted 4·n**3 FLOPs; an n×n matmul does 2·n**3"}
#: Units factors for TFLOP/s.
TFLOPS_UNITS = {
    1.0: "",
    1e12: "FLOP/s, not TFLOP/s (1e12 FLOP/s)",
    1e6: "MFLOP/s, not TFLOP/s",
    1e3: "GFLOP/s, not TFLOP/s",
    1e-3: "PFLOP/s, or milliseconds used as seconds (Event.elapsed_time returns ms)",
    1e-6: "time in microseconds used as seconds",
    1e-9: "time in nanoseconds used as seconds (perf_counter_ns)",
    1e12 / 2**40: "FLOP/s divided by 2**40 (a tebi) instead of 1e12",
}

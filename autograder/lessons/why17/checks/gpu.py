"""The why17 GPU sanity checks, registered on the simulated GPU behind the hidden probe.

The logic of each check lives in shared/lessons/why17/gpu/ (students run it too, without the
probe); here every verdict first passes the probe's gate on settings drawn from the secret seed
(autograder/gpu/probe.py). Each check of the lesson's rubric is registered once per timing
function it judges (``RUBRIC.judges``), with id ``<check>`` for the lesson's own function and
``<check>.<function>`` for the others, so results.json carries one test per function; every one
declares the simulated GPU as its device, whatever the grading device.

    sync_present          the timing function waits for the device before reading the clock
    warmup_present        it warms up before the clock starts
    bytes_counted_twice   a copy counts as read + write (2·n_bytes)
    units_gb_per_s        bandwidth in GB/s (1e9 bytes/s)
    buffer_exceeds_cache  measured_bandwidth measures main memory (a buffer >= 4x L2); copy_bandwidth
                          shows the cache cliff
    flops_counted_2n3     matmul_tflops counts 2·n³ FLOPs and reports TFLOP/s
    within_peak           measured_peak_tflops is compute-bound and never above the device's peak
"""
from __future__ import annotations

from autograder.api import CheckFailed, gpu_checks, probe
from shared.lessons.why17.gpu import RUBRIC

#: The task of each student module.
TASKS = {"bw": "task1", "flops": "task2"}
#: Weight of a check on a function that usually calls another timing function (bandwidth_sweep,
#: measured_bandwidth, measured_peak_tflops; points split by weight in a task): the functions
#: that do the timing weigh most.
OTHER_FUNCTION_WEIGHT = 0.5
#: What each check asks of a function, for the test's title.
TITLES = {
    "sync_present": "{f} waits for the device before reading the clock",
    "warmup_present": "{f} warms up before timing",
    "bytes_counted_twice": "{f} counts a copy as read + write",
    "units_gb_per_s": "{f} reports GB/s (1e9 bytes/s)",
    "buffer_exceeds_cache": "{f} measures main memory, not the cache",
    "flops_counted_2n3": "{f} counts 2·n³ FLOPs and reports TFLOP/s",
    "within_peak": "{f} is compute-bound and within the device's peak",
}
#: Every check instance by id, behind the probe: ``VERDICTS[id](runner, profile, seed)``.
VERDICTS = RUBRIC.verdicts(probe.settings, probe.follows)



def charge_shown(ctx, check_id: str, function: str) -> None:
    """CheckFailed with what the simulated GPU shows of ``function`` when its GPU checks point at
    ``check_id`` (a CPU check of the arguments) for it: a program that counts or sizes its work
    from the arguments only on a GPU is charged by that check as one that does so on the CPU too."""
    try:
        found = gpu_checks.slip(ctx, RUBRIC, VERDICTS, probe.settings, function)
    except Exception:  # the call's own failure is the GPU checks' to report
        return
    if found is not None and found.owner == check_id:
        raise CheckFailed(found.message)


for _name in sorted(TITLES):   # in the order of the check names (results keep it within a task)
    gpu_checks.register(RUBRIC, VERDICTS, _name, __name__, task=TASKS.__getitem__, title=TITLES[_name],
                        weight=lambda f: OTHER_FUNCTION_WEIGHT if f in RUBRIC.base else 1.0)

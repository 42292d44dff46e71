"""The why17 GPU sanity checks on the simulated GPU: ``RUBRIC`` (rubric.py, checks.py, slips.py,
counts.py) and ``VERDICTS``, judged under the Break It settings on a fixed device for ``python -m
shared.simgpu`` and the public tests; the hidden grader puts its probe in front of the same rubric.
``show`` prints what the student command shows first; ``model_reference`` answers for a correct
function from the device model.
"""
from __future__ import annotations

from shared.lessons.why17.gpu import checks, slips
from shared.lessons.why17.gpu.rubric import Why17
from shared.lessons.why17.show import model_reference, show
from shared.simgpu import settings

RUBRIC = Why17(checks.CHECKS, slips.diagnose, slips.agrees, slips.honest)
#: Every check instance by id, on the student-visible settings: ``VERDICTS[id](runner, profile, seed)``.
VERDICTS = RUBRIC.verdicts(settings.base)

__all__ = ["RUBRIC", "VERDICTS", "model_reference", "show"]

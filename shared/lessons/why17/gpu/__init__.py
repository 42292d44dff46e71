"""The why17 GPU sanity checks, as students run them on the simulated GPU.

``RUBRIC`` is the lesson's rubric (rubric.py: the table of checks and functions, and the
messages; checks.py: each check; slips.py: the slips a timed region shows; counts.py: the rate
of the work timed and the count a number implies). ``VERDICTS`` judges under the Break It
settings on a fixed device (shared/simgpu/settings.py), for ``python -m shared.simgpu`` and
the public tests. The hidden grader judges the same rubric with probes of its own in front, so
it stays the authority. ``show`` prints what the student command shows before the verdicts;
``model_reference`` answers for a correct function from the device model, where no reference
solution is at hand.
"""
from __future__ import annotations

from shared.lessons.why17.gpu import checks, slips
from shared.lessons.why17.gpu.rubric import Why17
from shared.lessons.why17.show import model_reference, show
from shared.simgpu import settings

RUBRIC = Why17(checks.CHECKS, slips.diagnose, slips.agrees)
#: Every check instance by id, on the student-visible settings: ``VERDICTS[id](runner, profile, seed)``.
VERDICTS = RUBRIC.verdicts(settings.base)

__all__ = ["RUBRIC", "VERDICTS", "model_reference", "show"]

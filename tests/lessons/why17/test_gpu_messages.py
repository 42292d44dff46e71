"""The GPU checks' messages (shared/lessons/why17/gpu/messages.yml): every entry is one the
checks can say, every one they say is there, and each reads as the style asks: a bounded text
that names the lesson section to reread when it tells a student what went wrong."""
from __future__ import annotations

import ast
import string
from pathlib import Path

from autograder.gpu import probe
from shared.lessons.why17.gpu import rubric
from shared.simgpu import judging

GPU = Path(rubric.__file__).parent
#: The modules that say them: the lesson's checks, its slips and table, the engine and the probe.
SAYERS = [GPU / name for name in ("checks.py", "slips.py", "counts.py", "rubric.py")] + [
    Path(judging.__file__), Path(probe.__file__)]
#: Entries that are no failure of their own: a pass, a pointer to the check that judges, or a
#: part another message holds (a cause, a note).
NOT_FAILURES = {"sync_ok", "warmup_ok", "judged_in_warmup", "judged_in_base", "bytes_ok", "units_ok",
                "bytes_units_only", "cache_ok", "cliff_ok", "flops_ok", "peak_ok", "peak_gap_is_a_count",
                "other_size", "cliff_ignores_size", "cliff_launch_bound", "cliff_flushed",
                "flops_above_peak", "flops_no_count", "judged_in_slip"}


def _literals() -> set[str]:
    """Every string literal of the modules that judge (``SAYERS``)."""
    found = set()
    for path in SAYERS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                found.add(node.value)
    return found


def _said() -> set[str]:
    """The keys passed to ``say`` as a literal, or chosen by a literal in a conditional."""
    keys = set()
    for path in SAYERS:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "say":
                for arg in ast.walk(node.args[0]):
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        keys.add(arg.value)
    return keys


def test_every_message_is_one_the_checks_can_say_and_every_one_they_say_is_written():
    written = set(rubric.messages())
    assert written - _literals() == set(), "messages.yml entries no check says"
    assert _said() - written == set(), "messages the checks say that messages.yml lacks"


def test_every_message_fills_in_and_a_failure_names_what_to_reread():
    for key, template in rubric.messages().items():
        fields = {name: 1.5 for _text, name, _spec, _conv in string.Formatter().parse(template) if name}
        text = rubric.say(key, **fields)
        assert "{" not in text and len(text) <= 500, key
        if key not in NOT_FAILURES:
            assert "Reread: " in text, f"{key}: a failure names the lesson section to reread"


def test_a_ratio_is_written_as_the_lesson_writes_ratios():
    assert rubric.say("sync_ok", function="copy_bandwidth", ratio=1.0234) == (
        "copy_bandwidth waits for the device: asynchronous / waiting launches = 1.02x.")

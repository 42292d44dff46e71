"""What a child sends back is read within a budget and checked against its request's schema
(autograder/sandbox/replies.py): a reply over the budget or of the wrong shape is the student's
error on the call that asked, one line, never the grader's failure. The children are real, and
forge their replies as a white-box attacker would (autograder/lessons/why17/fixtures/attacks/reply_*)."""
from __future__ import annotations

import json
import shutil
import textwrap

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from autograder.core.errors import StudentCrashed, StudentError, StudentMissing
from autograder.sandbox import replies
from autograder.sandbox.parent import Limits, Sandbox
from tests.helpers.paths import ROOT

ATTACKS = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "attacks"


def box(folder, attack: str | None = None) -> Sandbox:
    """A sandbox without torch or the simulated GPU (the replies are what is tested)."""
    if attack is not None:
        shutil.copyfile(ATTACKS / attack / "bw.py", folder / "bw.py")
    return Sandbox(folder, Limits(time_limit_s=60), preload=(), simgpu=False)


def test_a_reply_of_millions_of_values_is_refused_before_it_is_parsed(tmp_path):
    with box(tmp_path, "reply_many_lists") as sb:
        with pytest.raises(StudentCrashed) as info:
            sb.call("bw", "copy_bandwidth", (2**20,))
        assert "more than 250,000 values, more than the grader reads" in str(info.value)
        # charged once: the function is not called again, and its neighbours still answer
        with pytest.raises(StudentCrashed):
            sb.call("bw", "copy_bandwidth", (2**20,))
        assert sb.call("bw", "measured_bandwidth")[0] == 25.0


def test_keys_sharing_one_hash_stop_at_the_decoding_budget(tmp_path):
    with box(tmp_path, "reply_hash_keys") as sb:
        with pytest.raises(StudentCrashed) as info:
            sb.call("bw", "copy_bandwidth", (2**20,))
        assert f"took the grader more than {replies.MAX_DECODE_S:g} CPU s to read" in str(info.value)
        assert "\n" not in str(info.value)


def test_a_has_reply_of_the_wrong_type_is_the_files_error(tmp_path):
    with box(tmp_path, "reply_wrong_type_has") as sb:
        with pytest.raises(StudentMissing) as info:
            sb.call("bw", "copy_bandwidth", (2**20,))
        assert str(info.value).startswith("bw.py does not import: ")
        assert "something other than a list of names" in str(info.value)


def test_a_failure_of_the_wrong_shape_is_a_crash_of_that_function(tmp_path):
    with box(tmp_path, "reply_wrong_type_call") as sb:
        assert sb.call("bw", "copy_bandwidth", (2**20,))[0] == 25.0     # forges from now on
        with pytest.raises(StudentCrashed, match="neither a value nor a failure the grader knows"):
            sb.call("bw", "measured_bandwidth")


def test_the_budget_counts_values_as_it_decodes():
    data = [[1, 2], {"__tuple__": [3, 4]}]
    assert replies.decode(data, replies.Budget(values=7)) == [[1, 2], (3, 4)]
    with pytest.raises(replies.BadReply, match="more than 6 parts"):
        replies.decode(data, replies.Budget(values=6))


# --------------------------------------------------------------------------- fuzz

FORGER = textwrap.dedent('''
    """Answers every request for a module or function named target* with the reply it was given."""
    import sys

    FORGED = {}
    child = sys.modules["autograder.runtime.child"]
    honest = child.Child.handle


    def handle(self, request):
        if str(request.get("module")).startswith("target") or str(request.get("function")).startswith("target"):
            return {**FORGED, "id": request.get("id")}
        return honest(self, request)


    child.Child.handle = handle


    def forge(reply):
        FORGED.clear()
        FORGED.update(reply)
        return True
''')

tags = st.sampled_from(["__float__", "__tuple__", "__dict__", "__dtype__", "__array__", "__figure__", "__opaque__"])
plain = (st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
         | st.text(max_size=6))


def _nested(inner):
    """Lists, objects (their keys may be codec tags) and tagged objects of ``inner``."""
    return (st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6) | tags, inner, max_size=3)
            | st.builds(lambda t, v: {t: v}, tags, inner))


wire = st.recursive(plain, _nested, max_leaves=12)
reply = st.fixed_dictionaries({}, optional={"ok": st.sampled_from([True, False, None, 1, "yes"]) | wire,
                                            "value": wire, "trace": wire, "message": wire, "exc_type": wire,
                                            "kind": st.sampled_from(sorted(replies.KINDS)) | wire})


@settings(derandomize=True, deadline=None, max_examples=150)
@given(reply)
def test_fuzz_any_reply_shape_is_a_value_or_one_refusal(message):
    """``call_outcome`` and ``has_outcome`` (all the parent reads of a reply) answer any JSON."""
    json.dumps(message, allow_nan=False)      # what a child can put on the wire
    for read in (replies.call_outcome, replies.has_outcome):
        try:
            read(message)
        except replies.BadReply as exc:
            assert "\n" not in exc.reason


@pytest.mark.slow
@settings(derandomize=True, deadline=None, max_examples=40,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(message=reply, op=st.sampled_from(["call", "has"]))
def test_fuzz_the_sandbox_answers_any_forged_reply_with_a_value_or_a_student_error(tmp_path_factory, message, op):
    """A real child forges the reply; the parent returns a value or raises a StudentError whose
    message is one line: never another exception."""
    folder = tmp_path_factory.mktemp("forger")
    (folder / "forger.py").write_text(FORGER)
    with Sandbox(folder, Limits(time_limit_s=60), preload=(), simgpu=False) as sb:
        assert sb.call("forger", "forge", (message,))[0] is True
        try:
            if op == "call":
                sb.call("forger", "target_call")
            else:
                sb.has("target_module")
        except StudentError as exc:
            assert "\n" not in str(exc)

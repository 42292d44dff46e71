"""The graded course's secrets reach the jail as the grading passes them down (``Limits.hide``),
never from a course the process selected beforehand."""
from __future__ import annotations

from autograder.sandbox import policy
from autograder.sandbox.launch import Limits
from autograder.sandbox.policy import JailLimits


def test_the_course_given_is_hidden_and_no_other(tmp_path):
    course = tmp_path / "elsewhere" / "course"
    given = policy.build(tmp_path / "work", limits=JailLimits.from_sandbox(Limits(hide=policy.course_secrets(course))),
                         processes=8, namespaces=True)
    plain = policy.build(tmp_path / "work", limits=JailLimits.from_sandbox(Limits()), processes=8, namespaces=True)
    hidden = {str(course.resolve() / name) for name in policy.SECRETS}
    assert hidden <= set(given["hide"]) and not hidden & set(plain["hide"])
    assert str(policy.ROOT / "solutions") in plain["hide"]      # the checkout's own, always


def test_the_interpreters_folders_are_worked_out_once_per_process(tmp_path, monkeypatch):
    """sysconfig's paths are fixed for a process's life: a child's policy reuses them (they cost
    about a millisecond a child), and the view and the child's sys.path stay as they were."""
    import sysconfig

    from autograder.sandbox import launch

    view, path = policy.view_paths(), launch.python_path()
    asked = []
    real = sysconfig.get_paths
    monkeypatch.setattr(sysconfig, "get_paths", lambda *a, **k: asked.append(1) or real(*a, **k))
    assert policy.view_paths() == view and launch.python_path() == path
    policy.build(tmp_path / "work", limits=JailLimits.from_sandbox(Limits()), processes=8, namespaces=True)
    assert asked == []
    assert {str(policy.ROOT / "shared"), real()["purelib"]} <= set(view) and path[0] == str(policy.ROOT)

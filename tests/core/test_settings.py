"""The settings modules (autograder/core/settings.py, shared/settings.py): every environment variable
declared once, read only through its setting, refused in one line naming it, and listed in
docs/maintaining.md exactly as the module prints it."""
from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from autograder.core import settings
from autograder.core.errors import UsageError
from autograder.sandbox import forkserver
from shared import settings as shared_settings
from tests.helpers.paths import ROOT

#: The only files that may spell a setting's name: where each is declared.
DECLARED_IN = {ROOT / "autograder" / "core" / "settings.py", ROOT / "shared" / "settings.py"}
#: Where code lives: its files but Markdown (docs, READMEs and notebooks' text cells are for people
#: and name the variables freely).
CODE = ("autograder", "shared", "bench", "tests", ".ci", "solutions")


def test_the_docs_table_is_the_modules_output():
    text = (ROOT / "docs" / "maintaining.md").read_text(encoding="utf-8")
    assert settings.table() in text, "docs/maintaining.md: paste `python -m autograder.core.settings`"
    listed = set(re.findall(r"^\| `(WHY17_\w+)` \|", text, flags=re.M))
    assert listed == {s.name for s in settings.ALL}


@pytest.mark.parametrize("setting, bad", [
    (settings.SANDBOX, "namespace"), (settings.FORKSERVER, "yes"), (settings.FORKSERVER, "true"),
    (settings.BATCH_PARENT, "12a"), (settings.BATCH_PARENT, "0"), (settings.ROOT, "a\x00b"),
])
def test_a_refused_value_is_one_line_naming_the_variable(setting, bad):
    with pytest.raises(UsageError) as caught:
        setting.get({setting.name: bad})
    message = str(caught.value)
    assert message.startswith(setting.name) and "\n" not in message


def test_unset_or_empty_means_the_default_and_good_values_have_their_type():
    for env in ({}, {settings.SANDBOX.name: ""}):
        assert settings.SANDBOX.get(env) == "auto"
        assert settings.FORKSERVER.get(env) is True
        assert settings.BATCH_PARENT.get(env) is None and settings.SIM_SECRET.get(env) is None
    assert settings.FORKSERVER.get({settings.FORKSERVER.name: "0"}) is False
    assert settings.BATCH_PARENT.get({settings.BATCH_PARENT.name: "4711"}) == 4711
    assert settings.SANDBOX.get({settings.SANDBOX.name: "plain"}) == "plain"


def test_shared_settings_raise_their_own_error_without_the_grader():
    """Students' shared/ cannot import the grader: its settings raise a ValueError of their own."""
    code = ("import sys; from shared import settings as s\n"
            "try:\n    s.Setting('X_FLAG', 'flag', '1', 'doc').get({'X_FLAG': 'maybe'})\n"
            "except s.SettingError as e:\n    print(e)\n"
            "print('autograder' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["X_FLAG='maybe': expected 1 (on) or 0 (off)", "False"]
    assert issubclass(shared_settings.SettingError, ValueError)


def test_a_bad_value_stops_grade_with_exit_2_and_one_line(tmp_path):
    env = {"PATH": "/usr/bin:/bin", settings.SANDBOX.name: "bogus",
           settings.SIM_SECRET.name: "the test suite's fixed secret"}
    done = subprocess.run([sys.executable, "-m", "autograder", "grade", "solutions/why17",
                           "--out", str(tmp_path / "results.json")],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {settings.SANDBOX.name}='bogus': expected one of auto, namespaces, plain"
    assert not (tmp_path / "results.json").exists()


def test_every_command_checks_the_settings_before_its_arguments(tmp_path):
    """grade-all reads the fork-server setting only in its workers: the command line checks every
    grader setting first, so a bad one stops it in one line, before it looks at its folder."""
    env = {"PATH": "/usr/bin:/bin", settings.FORKSERVER.name: "yes"}
    done = subprocess.run([sys.executable, "-m", "autograder", "grade-all", str(tmp_path / "no-such-class"),
                           "--out", str(tmp_path / "out")], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=120)
    expected = f"error: {settings.FORKSERVER.name}='yes': expected 1 (on) or 0 (off)\n"
    assert (done.returncode, done.stderr) == (2, expected)
    assert not (tmp_path / "out").exists()


def test_the_fork_server_keeps_the_graders_settings_but_never_the_secret():
    env = {s.name: "x" for s in settings.ALL} | {"PATH": "/bin", "WHY17_OTHER": "y", "TOKEN": "z"}
    kept = forkserver.server_environment(env)
    assert settings.SIM_SECRET.name not in kept and "TOKEN" not in kept and "WHY17_OTHER" not in kept
    assert {s.name for s in settings.ALL} - {settings.SIM_SECRET.name} <= set(kept)


def test_no_code_spells_a_settings_name_outside_its_declaration():
    names = {s.name for s in settings.ALL}
    found = []
    files = [p for top in CODE for p in (ROOT / top).rglob("*")
             if p.is_file() and "__pycache__" not in p.parts and p.suffix != ".md"]
    for path in [*files, ROOT / "Makefile"]:
        if path in DECLARED_IN:
            continue
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError:
            continue
        if path.suffix == ".ipynb":
            text = "\n".join("".join(c["source"]) for c in json.loads(text)["cells"] if c["cell_type"] == "code")
        for number, line in enumerate(text.splitlines(), 1):
            found += [f"{path.relative_to(ROOT)}:{number}: {name}"
                      for name in set(re.findall(r"\bWHY17_[A-Z0-9_]+\b", line)) & names]
    assert not found, "use the setting's .name (autograder/core/settings.py):\n" + "\n".join(found)

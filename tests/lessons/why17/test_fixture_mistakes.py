"""Fixtures stored as the mistake alone (autograder/lessons/why17/fixtures/*/*/mistake.yml).

Every fixture builds against today's reference, each mistake really changes its file, none of
the stored .py files is a copy of a reference module, and a mistake whose snippet the reference
no longer holds fails loudly, naming the fixture and the snippet.
"""
from __future__ import annotations

import shutil

import pytest

from autograder.lessons.why17.fixtures import build, mistake

#: The folders of fixtures laid over the reference: these four, and any other holding a mistake.yml (class/).
KINDS = sorted({"wrong", "hostile", "good", "public_wrong"}
               | {p.parent.parent.name for p in build.HERE.glob("*/*/mistake.yml")})
FIXTURES = sorted((kind, p.name) for kind in KINDS for p in (build.HERE / kind).iterdir() if p.is_dir())
#: Share of a stored file's distinct code lines (those the stub does not hold) that may also be
#: lines of the reference module.
MAX_SHARED = 0.5
#: The released stubs.
STUBS = build.REFERENCE.parents[1] / "assignments" / build.REFERENCE.name


@pytest.mark.parametrize(("kind", "name"), FIXTURES, ids=[f"{k}/{n}" for k, n in FIXTURES])
def test_fixture_builds_and_changes_its_files(kind, name):
    changed = build.changed_files(kind, name)
    assert changed, f"{kind}/{name} changes nothing"
    assert {f.removesuffix(".py") for f in changed} == build.changed_modules(kind, name)
    for file, text in changed.items():
        assert text != (build.REFERENCE / file).read_text(), f"{kind}/{name}/{file} is the reference"


def _code_lines(text: str) -> set[str]:
    return {line.strip() for line in text.splitlines() if len(line.strip()) > 3}


@pytest.mark.parametrize(("kind", "name"), FIXTURES, ids=[f"{k}/{n}" for k, n in FIXTURES])
def test_no_stored_file_is_a_copy_of_the_reference(kind, name):
    for path in sorted((build.HERE / kind / name).glob("*.py")):
        # Lines the released stub also holds (docstrings, signatures) are the student's to keep:
        # only what a student writes counts, the lines of the solution regions.
        stub = _code_lines((STUBS / path.name).read_text()) if (STUBS / path.name).is_file() else set()
        ours = _code_lines(path.read_text()) - stub
        theirs = _code_lines((build.REFERENCE / path.name).read_text()) - stub
        shared = len(ours & theirs) / max(len(ours), 1)
        assert shared <= MAX_SHARED, f"{path} repeats {shared:.0%} of solutions/why17/{path.name}: use a mistake.yml"


@pytest.fixture
def reference(tmp_path):
    ref = tmp_path / "reference"
    ref.mkdir()
    (ref / "m.py").write_text(
        '"""A module."""\n\n\n@decorate\ndef f(x):\n    if x:\n        y = 1\n        return y\n    return 0\n\n\n'
        'def g():\n    return 2\n    return 2\n')
    return ref


def _fixture(tmp_path, text):
    folder = tmp_path / "wrong" / "slip"
    folder.mkdir(parents=True)
    (folder / mistake.FILENAME).write_text(text)
    return folder


def test_snippet_replaced_at_its_indent_and_headed(tmp_path, reference):
    folder = _fixture(tmp_path, "description: returns 2\nfile: m.py\nreplace:\n"
                                "  - old: |\n      y = 1\n      return y\n    new: return 2\n")
    text = mistake.apply(folder, reference, "WRONG ON PURPOSE")["m.py"]
    assert text.splitlines()[0] == "# WRONG ON PURPOSE (slip): returns 2"
    assert "    if x:\n        return 2\n    return 0\n" in text and "y = 1" not in text


def test_whole_function_and_count_and_deletion(tmp_path, reference):
    folder = _fixture(tmp_path, "description: d\nfile: m.py\nreplace:\n"
                                "  - function: f\n    new: |\n      def f(x):\n          return -1\n"
                                "  - old: return 2\n    count: 2\n")
    text = mistake.apply(folder, reference, "H")["m.py"]
    assert "@decorate" not in text and "def f(x):\n    return -1\n" in text
    assert "def g():\n" in text and "return 2" not in text


def test_stale_snippet_fails_naming_fixture_and_snippet(tmp_path, reference):
    folder = _fixture(tmp_path, "description: d\nfile: m.py\nreplace:\n"
                                "  - old: return 0\n    new: return 1\n")
    mistake.apply(folder, reference, "H")
    (reference / "m.py").write_text((reference / "m.py").read_text().replace("return 0", "return None"))
    with pytest.raises(mistake.MistakeError) as err:
        mistake.apply(folder, reference, "H")
    message = str(err.value)
    assert str(folder / "mistake.yml") in message and "change 1" in message
    assert "'return 0'" in message and "occurs 0 time(s) in m.py, expected 1" in message


@pytest.mark.parametrize(("change", "words"), [
    ("  - old: return 2\n", "occurs 2 time(s) in m.py, expected 1"),
    ("  - function: h\n    new: 'def h(): pass'\n", "has 0 top-level def(s) named 'h'"),
    ("  - old: x\n    function: f\n", "exactly one of 'old'"),
    ("  - old: x\n    colour: red\n", "unknown key(s) ['colour']"),
    ("  - old: x\n    file: nothere.py\n", "the reference has no nothere.py"),
    ("  - old: x\n    count: 0\n", "'count' must be a whole number"),
])
def test_bad_change_fails_with_one_clear_line(tmp_path, reference, change, words):
    folder = _fixture(tmp_path, "description: d\nfile: m.py\nreplace:\n" + change)
    with pytest.raises(mistake.MistakeError, match=None) as err:
        mistake.apply(folder, reference, "H")
    assert words in str(err.value) and "\n" not in str(err.value)


def test_real_fixture_goes_stale_when_the_reference_changes(tmp_path, monkeypatch):
    """A copy of the reference with one function edited: the fixture that edits it no longer builds."""
    ref = tmp_path / "why17"
    shutil.copytree(build.REFERENCE, ref, ignore=shutil.ignore_patterns("tests", "__pycache__"))
    predict = ref / "predict.py"
    predict.write_text(predict.read_text().replace("min(peak_tflops, bw_gbs * intensity / 1000.0)",
                                                   "min(peak_tflops, intensity * bw_gbs / 1000.0)"))
    monkeypatch.setattr(build, "REFERENCE", ref)
    with pytest.raises(mistake.MistakeError, match=r"wrong/attainable_max/mistake\.yml: change 1: 'old'"):
        build.changed_files("wrong", "attainable_max")


def test_a_file_given_whole_and_as_a_mistake_is_refused(tmp_path, monkeypatch):
    shutil.copytree(build.HERE / "wrong" / "attainable_max", tmp_path / "wrong" / "x")
    (tmp_path / "wrong" / "x" / "predict.py").write_text("")
    monkeypatch.setattr(build, "HERE", tmp_path)
    with pytest.raises(mistake.MistakeError, match="predict.py given both as a whole file and in mistake.yml"):
        build.changed_files("wrong", "x")


def test_base_applies_the_change_to_another_fixtures_file():
    base = build.changed_files("good", "compact_all_four")["predict.py"]
    built = build.changed_files("public_wrong", "wrong_units")["predict.py"]
    assert "GB = 1e9\n" in base and "GB = 1e9\n" not in built and "GB = 2**30" in built
    assert built.splitlines()[0].startswith("# WRONG ON PURPOSE (wrong_units): reads GB/s as GiB/s")


def test_a_base_that_leads_back_to_itself_is_refused(tmp_path, monkeypatch):
    for name, other in (("a", "b"), ("b", "a")):
        folder = tmp_path / "wrong" / name
        folder.mkdir(parents=True)
        (folder / mistake.FILENAME).write_text(f"description: d\nfile: m.py\nbase: wrong/{other}\n"
                                                    "replace:\n  - old: x\n")
    monkeypatch.setattr(build, "HERE", tmp_path)
    with pytest.raises(mistake.MistakeError, match="'base' wrong/a leads back to wrong/b"):
        build.changed_files("wrong", "a")


def test_a_gpu_mistake_rewrites_its_docstring_and_is_completed_with_good_events(tmp_path):
    """gpu/ mistakes add no header line (the docstring says MISTAKE); gpu_submission writes the
    built file and good_events' other one."""
    stored = sorted(p.parent.name for p in (build.HERE / "gpu").glob("*/mistake.yml"))
    assert stored
    for name in stored:
        ((file, text),) = build.changed_files("gpu", name).items()
        assert text.startswith('"""MISTAKE: '), name
        folder = build.gpu_submission(name, tmp_path / name)
        assert sorted(p.name for p in folder.iterdir()) == ["bw.py", "flops.py"]
        assert (folder / file).read_text() == text
        (other,) = {"bw.py", "flops.py"} - {file}
        assert (folder / other).read_text() == (build.HERE / "gpu" / build.GPU_COMPLETE_WITH / other).read_text()

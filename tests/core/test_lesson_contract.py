"""The lesson contract is declared in one place (autograder/core/lesson.py) and checked at load.

A grader package exports one ``LESSON``; a missing or wrong piece stops the command with one line
naming it. Checks declare their device; the Context protocol and the Rubric base declare what
checks and the engine use; a grader-side exception is a grader failure, never a grade; the
grading key digests the files the Lesson names.
"""
from __future__ import annotations

import inspect
import itertools
import re
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from autograder.batch import fingerprint
from autograder.core import lesson, registry
from autograder.core.errors import GraderError, UsageError
from autograder.gpu import probe
from autograder.grading import checkrun, context, grade, schedule
from autograder.lessons.why17 import LESSON
from shared.simgpu import judging
from tests.helpers.paths import ROOT
from tests.helpers.tiny_course import cli, copy_of_tiny

_names = (f"contract_pkg_{i}" for i in itertools.count())


def package(tmp_path: Path, monkeypatch, init: str, *, checks: bool = True, extra: dict | None = None) -> str:
    """A grader package of a fresh name in tmp_path whose __init__.py is ``init`` ({name}: its name)."""
    name = next(_names)
    folder = tmp_path / name
    (folder / "checks").mkdir(parents=True) if checks else folder.mkdir(parents=True)
    if checks:
        (folder / "checks" / "__init__.py").write_text("")
    (folder / "__init__.py").write_text(textwrap.dedent(init).format(name=name))
    for rel, text in (extra or {}).items():
        (folder / rel).parent.mkdir(parents=True, exist_ok=True)
        (folder / rel).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    return name


def refused(name: str) -> str:
    with pytest.raises(UsageError) as caught:
        lesson.load(name)
    message = str(caught.value)
    assert "\n" not in message and name in message, message
    return message


def test_a_complete_lesson_loads(tmp_path, monkeypatch):
    name = package(tmp_path, monkeypatch, """
        from autograder.api import Lesson
        LESSON = Lesson(package=__name__, checks=__name__ + ".checks", torch_files=("bw",))
    """)
    loaded = lesson.load(name)
    assert loaded.torch_files == ("bw",) and loaded.depends == {} and loaded.folder == tmp_path / name


def test_a_package_without_a_lesson_is_one_line_naming_it(tmp_path, monkeypatch):
    name = package(tmp_path, monkeypatch, "TORCH_FILES = ('bw',)\n")
    assert "exports no LESSON" in refused(name)


def test_a_lesson_without_its_checks_is_one_line_naming_them(tmp_path, monkeypatch):
    name = package(tmp_path, monkeypatch, """
        from autograder.api import Lesson
        LESSON = Lesson(package=__name__)
    """)
    assert "'checks'" in refused(name)


@pytest.mark.parametrize("field, value, words", [
    ("checks", "'{name}.nope'", "checks names the module"),
    ("plots", "'{name}.plotdata'", "plots names the module"),
    ("mistakes", "'mistakes.yml'", "mistakes names"),
    ("depends", "{{'roofline': ('predict',)}}", "no stand-in"),
    ("package", "'somebody.else'", "course.yml's grader is"),
    ("torch_files", "'bw'", "torch_files must be a list of names"),
])
def test_a_piece_the_lesson_names_that_is_missing_is_one_line_naming_it(tmp_path, monkeypatch, field, value, words):
    keys = {"package": "__name__", "checks": "__name__ + '.checks'", field: value}
    args = ", ".join(f"{k}={v}" for k, v in keys.items())
    name = package(tmp_path, monkeypatch, f"from autograder.api import Lesson\nLESSON = Lesson({args})\n")
    message = refused(name)
    assert words in message and field in message, message


def test_a_course_whose_grader_has_no_lesson_stops_grade_with_one_line(tmp_path):
    tiny = copy_of_tiny(tmp_path)
    (tiny / "tiny_grader" / "__init__.py").write_text('"""No LESSON here."""\n')
    proc = cli("--course", tiny, "grade", tiny / "submissions" / "good_adds", "--assignment", "tiny",
               "--out", tmp_path / "r.json")
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().splitlines() == [proc.stderr.strip()]
    assert "exports no LESSON" in proc.stderr and not (tmp_path / "r.json").exists()


def test_checks_declare_their_device_and_the_schedule_reads_only_that():
    checks = grade.load_checks(LESSON)
    on_gpu = {cid for cid, c in checks.items() if schedule.on_gpu(c)}
    assert on_gpu and all(checks[c].device == registry.SIMULATED_GPU for c in on_gpu)
    assert {"sync_present", "sync_present.matmul_tflops", "within_peak"} <= on_gpu
    assert all(c.device == registry.CPU for cid, c in checks.items() if cid not in on_gpu)
    named_gpu_but_cpu = SimpleNamespace(device=registry.CPU, fn=SimpleNamespace(__module__="x.checks.gpu_x"))
    assert not schedule.on_gpu(named_gpu_but_cpu)


def test_no_module_of_the_engine_or_a_lesson_inspects_frames():
    files = [p for p in (ROOT / "autograder").rglob("*.py") if "fixtures" not in p.parts]
    assert not [p for p in files if "_getframe" in p.read_text(encoding="utf-8")]


def test_the_context_protocol_declares_everything_checks_ask_of_it():
    declared = {n for n in dir(registry.Context) if not n.startswith("_")} | set(registry.Context.__annotations__)
    sources = [*(ROOT / "autograder" / "lessons").rglob("checks/*.py"), ROOT / "autograder" / "gpu" / "checks.py"]
    used = {m for p in sources for m in re.findall(r"\bctx\.(\w+)", p.read_text(encoding="utf-8"))}
    assert used and used <= declared, used - declared
    init = inspect.getsource(context.GradingContext.__init__)
    implemented = set(dir(context.GradingContext)) | set(re.findall(r"self\.(\w+) =", init))
    assert {n for n in dir(registry.Context) if not n.startswith("_")} <= implemented


def test_the_rubric_base_declares_every_method_the_engine_calls():
    engine = (ROOT / "autograder" / "gpu" / "probe.py").read_text(encoding="utf-8")
    called = set(re.findall(r"\brubric\.(\w+)\(", engine))
    assert called and all(callable(getattr(judging.Rubric, name, None)) for name in called), called
    assert probe.follows   # the module the names were read from is the probe the checks run behind


def test_a_check_that_raises_is_a_grader_failure_not_a_grade():
    def slips(ctx):
        return {}["missing"]   # a grader bug: KeyError

    check = registry.Check(id="slips", task="t", name="slips", files=(), fn=slips)
    with pytest.raises(GraderError, match="check slips raised KeyError"):
        checkrun.run_check(SimpleNamespace(), check)


def test_the_grading_key_changes_with_the_reference_and_the_declared_files(tmp_path):
    from autograder.core import course

    tiny = copy_of_tiny(tmp_path)
    asg = course.load(tiny / "course.yml").assignment("tinygpu")
    reference = (tiny / "solutions" / "tinygpu" / "fill.py").resolve()
    assert reference in fingerprint.deciding_files(asg)
    before = fingerprint.grader_digest(asg)
    with open(reference, "a") as fh:
        fh.write("\n# the reference changed\n")
    fingerprint._manifest.cache_clear()
    assert fingerprint.grader_digest(asg) != before
    why17 = course.load().assignment("why17")
    files = fingerprint.deciding_files(why17)
    assert ROOT / "shared" / "lessons" / "why17" / "gpu" / "rubric.py" in files
    assert lesson.of(why17).folder / "__init__.py" in files
    prints = fingerprint.of_checks(why17, ["sync_present", "law_bandwidth_doubles", "nope"])
    assert prints["sync_present"].startswith("checks/gpu.py:") and "nope" not in prints
    assert prints["law_bandwidth_doubles"].startswith("checks/predict_laws.py:")

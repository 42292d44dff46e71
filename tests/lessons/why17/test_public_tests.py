"""The public tests, run as a student runs them: they fail on the stubs, each naming its task, and
pass on the reference. Separate pytest processes, since both folders define modules named bw,
flops, predict and roofline.
"""
import pytest
import torch

from autograder.core import course
from tests.helpers.public_runs import ROOT, run_pytest, student_tree

#: Slow, left out of `make check`: every test runs the public tests in a child pytest.
pytestmark = pytest.mark.slow

ASSIGNMENT = course.load().assignment("why17")
TASK_IDS = {t.id for t in ASSIGNMENT.tasks}
#: Tasks graded from .py files; task5 (the notebook's measurements.json) has no public pytest tests.
CODE_TASKS = [t for t in ASSIGNMENT.tasks if t.functions]


def _task_of(item: dict) -> str:
    tasks = [m for m in item["marks"] if m in TASK_IDS]
    assert len(tasks) == 1, f"each public test carries exactly one task marker, got {item['marks']}"
    return tasks[0]


@pytest.fixture(scope="module")
def stub_run(tmp_path_factory):
    return run_pytest("assignments/why17", cwd=ROOT, scratch=tmp_path_factory.mktemp("stubs"))


#: Hides any GPU from the child, as on a student's laptop: device=None then means the CPU.
NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    return run_pytest("solutions/why17", cwd=ROOT, scratch=tmp_path_factory.mktemp("reference"), env=NO_GPU)


def test_every_public_test_fails_on_the_stubs(stub_run):
    assert stub_run.returncode == 1, stub_run.output[-3000:]
    assert stub_run.items, "no public tests were collected"
    assert stub_run.outcomes() <= {"failed", "error"}, stub_run.output[-3000:]


def test_each_stub_failure_is_the_not_implemented_error_naming_its_task(stub_run):
    for nodeid, item in stub_run.items.items():
        task = _task_of(item)
        assert "NotImplementedError" in item["message"], f"{nodeid}: {item['message']}"
        assert f"{task}." in item["message"], f"{nodeid} is marked {task}, but failed with {item['message']!r}"


@pytest.mark.parametrize("task", CODE_TASKS, ids=[t.id for t in CODE_TASKS])
def test_every_student_function_is_exercised(stub_run, task):
    # Each function's stub label ('task1.3: measured_bandwidth') shows up in some failure.
    messages = " ".join(item["message"] for item in stub_run.items.values())
    for function in task.functions:
        assert task.label(function) in messages, f"no public test calls {function}"


def test_every_public_test_passes_on_the_reference_without_a_gpu(reference_run, stub_run):
    assert reference_run.returncode == 0, reference_run.output[-3000:]
    assert reference_run.outcomes() == {"passed"}
    assert {n.split("/", 2)[2] for n in reference_run.items} == {n.split("/", 2)[2] for n in stub_run.items}


@pytest.mark.skipif(not torch.cuda.is_available(), reason="the GPU tier needs a CUDA device")
def test_the_benchmark_tests_pass_on_the_reference_on_a_gpu(tmp_path):
    run = run_pytest("solutions/why17", "-m", "task1 or task2", cwd=ROOT, scratch=tmp_path)
    assert run.returncode == 0, run.output[-3000:]
    assert run.items and run.outcomes() == {"passed"}


# --- Correct work in other styles passes; wrong work fails with an ordinary assertion -----------

def test_correct_work_in_other_styles_passes(tmp_path):
    root = student_tree(tmp_path, fixture="good/compact_all_four")
    run = run_pytest("assignments/why17", cwd=root, scratch=tmp_path / "run", env=NO_GPU)
    assert run.returncode == 0, run.output[-3000:]
    assert run.items and run.outcomes() == {"passed"}


def _failed(run) -> dict[str, str]:
    return {n.split("::", 1)[1]: item["message"] for n, item in run.items.items() if item["outcome"] != "passed"}


def test_ceilings_in_gib_fail_the_lessons_numbers(tmp_path):
    root = student_tree(tmp_path, fixture="public_wrong/wrong_units")
    run = run_pytest("assignments/why17/tests/test_predict.py", cwd=root, scratch=tmp_path / "run")
    failed = _failed(run)
    for name in ("test_spark_whole_checkpoint_is_about_17_tokens_per_s", "test_h100_is_about_209_tokens_per_s",
                 "test_spark_ridge_point_is_about_458_flops_per_byte", "test_batch_64_at_1k_context_on_the_spark"):
        assert name in failed, sorted(failed)
        assert failed[name].startswith("assert"), failed[name]
    # Laws that hold whatever the unit still pass: the failures point at the units, not at everything.
    assert "test_doubling_bandwidth_doubles_the_ceiling" not in failed
    assert not any(name.startswith("test_each_positional_argument_rejects") for name in failed)


def test_an_unmarked_ridge_point_fails_only_that_test(tmp_path):
    root = student_tree(tmp_path, fixture="public_wrong/no_ridge")
    run = run_pytest("assignments/why17/tests/test_roofline.py", cwd=root, scratch=tmp_path / "run")
    failed = _failed(run)
    assert list(failed) == ["test_roofline_marks_the_ridge_point"], failed
    assert "mark the ridge point at 458 FLOPs/byte" in failed["test_roofline_marks_the_ridge_point"]


# --- The lesson's GPU mistakes are caught on a laptop, with the grader's message ------------------

#: gpu fixture -> the one simulated-GPU public test it fails, and words of the grader's message:
#: the lesson's headline mistakes (Break It), and a correct style that passes.
LAPTOP_MISTAKES = {
    "wrong_no_sync": ("sync_present", "Synchronize before reading the clock"),
    "wrong_bytes_once": ("bytes_counted_twice", "you counted the bytes once"),
    "wrong_tiny_measured": ("buffer_exceeds_cache", "the copy runs from the cache"),
    "wrong_no_warmup": ("warmup_present", "Run a few untimed iterations first"),
    "wrong_flops_n3": ("flops_counted_2n3", "you counted n**3 FLOPs"),
    "wrong_units_gib": ("units_gb_per_s", "GiB"),
    "good_timeit": (None, ""),
}


@pytest.mark.parametrize("name", sorted(LAPTOP_MISTAKES))
def test_a_laptop_student_sees_the_gpu_mistakes_in_pytest(tmp_path, name):
    from autograder.lessons.why17.fixtures import build

    root = student_tree(tmp_path)
    build.gpu_submission(name, root / "assignments" / "why17")
    tests = [f"assignments/why17/tests/test_{m}_simulated_gpu.py" for m in ("bw", "flops")]
    run = run_pytest(*tests, cwd=root, scratch=tmp_path / "run", env=NO_GPU)
    failed = {n.split("[", 1)[1].rstrip("]"): msg for n, msg in _failed(run).items()}
    check, words = LAPTOP_MISTAKES[name]
    assert set(failed) == ({check} if check else set()), failed
    if check:
        assert run.returncode == 1 and words in failed[check], failed[check]


# --- Each of the README's named slips gets its own diagnosis in the public tests ------------------

#: The README's name for a slip ("Which mistakes cost most") -> the wrong submission that makes it
#: (a gpu/ fixture of LAPTOP_MISTAKES, or a wrong/ one with the public test file it fails) and the
#: words of its diagnosis there.
README_SLIPS = {
    "Bytes counted once": ("gpu/wrong_bytes_once", None, LAPTOP_MISTAKES["wrong_bytes_once"][1]),
    "No synchronize before reading the clock": ("gpu/wrong_no_sync", None, LAPTOP_MISTAKES["wrong_no_sync"][1]),
    "A buffer that fits in the cache": ("gpu/wrong_tiny_measured", None, LAPTOP_MISTAKES["wrong_tiny_measured"][1]),
    "No warm-up": ("gpu/wrong_no_warmup", None, LAPTOP_MISTAKES["wrong_no_warmup"][1]),
    "n³ instead of 2·n³ FLOPs": ("gpu/wrong_flops_n3", None, LAPTOP_MISTAKES["wrong_flops_n3"][1]),
    "GiB/s or bytes/s where GB/s is asked": ("gpu/wrong_units_gib", None, LAPTOP_MISTAKES["wrong_units_gib"][1]),
    "The 1e9 left out": ("wrong/decode_forgets_1e9", "test_predict.py", "the 1e9 left out"),
    "K and V: the factor 2 left out": ("wrong/kv_without_2", "test_predict.py", "K and V: the factor 2 left out"),
    "Weights re-read per stream": ("wrong/ceiling_rereads_weights", "test_predict.py", "weights re-read per stream"),
    "max instead of min": ("wrong/attainable_max", "test_predict.py", "max instead of min"),
    "Linear axes": ("wrong/roofline_linear_axes", "test_roofline.py", "log-log axes"),
}


def test_every_slip_the_readme_names_has_a_diagnosis_of_its_own():
    import re
    readme = (ROOT / "solutions/why17/README.md").read_text(encoding="utf-8")
    section = readme.split("## Which mistakes cost most", 1)[1].split("\n## ", 1)[0]
    named = re.findall(r"^- \*\*(.+?)\*\*", section, re.M)
    assert set(named) == set(README_SLIPS), sorted(set(named) ^ set(README_SLIPS))
    words = [w for _, _, w in README_SLIPS.values()]
    assert len(set(words)) == len(words)


@pytest.mark.parametrize("name", [n for n, (_, file, _) in README_SLIPS.items() if file])
def test_a_readme_slip_fails_the_public_tests_under_its_own_name(tmp_path, name):
    fixture, file, words = README_SLIPS[name]
    root = student_tree(tmp_path, fixture=fixture)
    run = run_pytest(f"assignments/why17/tests/{file}", cwd=root, scratch=tmp_path / "run", env=NO_GPU)
    failed = _failed(run)
    assert failed and any(words in message for message in failed.values()), failed
    others = [w for n, (_, _, w) in README_SLIPS.items() if n != name]
    generic = ("a factor 2 too many", "a factor 2 is missing")
    for test, message in failed.items():
        assert not any(w in message for w in (*others, *generic)), (test, message)

"""The student README agrees with course.yml (ids, titles, points, lesson sections) and with the
tables (the lesson's two decode numbers), and tells how to run the checks and how to submit.
"""
from __future__ import annotations

import re
import subprocess
import sys

import pytest

from autograder.core import course
from shared import settings, tables
from tests.helpers.public_runs import ROOT

ASSIGNMENT = course.load().assignment("why17")
README = ROOT / "solutions" / "why17" / "README.md"
_ROW = re.compile(r"^\|\s*(\w+)\s*\|\s*(.+?)\s*\|\s*([\d.]+)\s*\|\s*(.+?)\s*\|\s*$")


def readme_tasks(text: str) -> list[tuple[str, str, float, str]]:
    """Rows of the README's task table: (id, title, points, lesson section)."""
    rows = []
    for line in text.splitlines():
        match = _ROW.match(line)
        if match:
            task_id, title, points, lesson = match.groups()
            rows.append((task_id, title, float(points), lesson))
    return rows


def table_drift(text: str, assignment) -> list[str]:
    """How the README's task table differs from course.yml, one line per difference."""
    rows = {row[0]: row for row in readme_tasks(text)}
    problems = []
    for task in assignment.tasks:
        row = rows.pop(task.id, None)
        if row is None:
            problems.append(f"{task.id} is missing from the README's task table")
            continue
        for field, said, truth in (("title", row[1], task.title), ("points", row[2], task.points),
                                   ("lesson section", row[3], task.lesson)):
            if said != truth:
                problems.append(f"{task.id}: README says {field} {said!r}, course.yml says {truth!r}")
    problems += [f"{extra}: in the README's task table but not in course.yml" for extra in rows]
    return problems


def test_the_task_table_matches_course_yml():
    assert table_drift(README.read_text(encoding="utf-8"), ASSIGNMENT) == []


def test_the_task_table_lists_tasks_in_course_order():
    assert [row[0] for row in readme_tasks(README.read_text(encoding="utf-8"))] == [t.id for t in ASSIGNMENT.tasks]


_TASK1 = ASSIGNMENT.tasks[0]


@pytest.mark.parametrize("old, new, complaint", [
    (f"| task1 | {_TASK1.title} | {_TASK1.points:g} |", f"| task1 | {_TASK1.title} | {_TASK1.points + 5:g} |",
     f"task1: README says points {_TASK1.points + 5:.1f}, course.yml says {_TASK1.points:.1f}"),
    ("| task2 | Matmul throughput (flops.py)", "| task2 | Matmul speed (flops.py)", "task2: README says title"),
    ("| task5 |", "| task6 |", "task5 is missing"),
])
def test_a_drifted_table_is_caught(old, new, complaint):
    text = README.read_text(encoding="utf-8")
    assert old in text
    assert any(complaint in p for p in table_drift(text.replace(old, new), ASSIGNMENT))


def test_the_two_decode_numbers_come_from_the_tables():
    text = README.read_text(encoding="utf-8")
    spark = tables.device("spark")
    llama = tables.model("llama-3.1-8b")
    bf16 = tables.weight_format("bf16").bytes_per_weight
    for whole_checkpoint in (True, False):
        gb = llama.params_read(whole_checkpoint=whole_checkpoint) * bf16 / 1e9
        speed = spark.bw_gbs / gb
        assert f"{gb:.2f} GB" in text
        assert f"{speed:.0f} tok/s" in text or f"{speed:.1f} tok/s" in text
    assert f"{spark.bw_gbs:g} GB/s" in text


@pytest.mark.parametrize("needle", [
    "pytest assignments/why17", "-m task1", "python -m shared.simgpu --device h100",
    "pip install -r requirements.txt", "Gradescope", "python -m shared.submit", "--allow-missing",
])
def test_the_readme_says_how_to_run_check_and_submit(needle):
    assert needle in README.read_text(encoding="utf-8")


def test_the_release_carries_the_same_readme():
    assert (ROOT / "assignments" / "why17" / "README.md").read_bytes() == README.read_bytes()


def test_the_measurements_schema_matches_the_graders():
    from autograder.lessons.why17 import measurements

    text = README.read_text(encoding="utf-8")
    assert f'"schema": "{measurements.SCHEMA}"' in text
    for field in measurements._TOP + measurements._DEVICE + measurements._ROW:
        assert f'"{field}":' in text, f"the README's measurements.json schema lacks {field!r}"


def test_the_readme_names_every_file_course_yml_grades():
    text = section(README.read_text(encoding="utf-8"), "Submitting")
    assert [name for name in ASSIGNMENT.handed_in if f"`{name}`" not in text] == []


def test_the_cpu_torch_install_pins_the_graded_version():
    pin = next(line.split()[0] for line in (ROOT / "requirements.txt").read_text(encoding="utf-8").splitlines()
               if line.startswith("torch=="))
    assert f"pip install {pin} --index-url https://download.pytorch.org/whl/cpu" in README.read_text(encoding="utf-8")


def test_the_setup_table_covers_the_laptops():
    text = section(README.read_text(encoding="utf-8"), "Setup")
    for platform in ("Linux x86-64 or aarch64", "macOS on Apple silicon (arm64)", "macOS on Intel (x86-64)",
                     "WSL 2"):
        assert platform in text
    assert "cd " not in text.replace("`cd`", ""), "every command runs from the top folder, none after a cd"


# --- The lab notebook, the helpers, the quiz, the costly mistakes -------------------------------------

def section(text: str, heading: str) -> str:
    """The README's text under ``## heading``, up to the next ``## ``."""
    start = text.index(f"## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end != -1 else None]


def _readme() -> str:
    return README.read_text(encoding="utf-8")


def _notebook_code() -> str:
    import json
    cells = json.loads((ROOT / "solutions" / "why17" / "why17.ipynb").read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")


@pytest.mark.parametrize("needle", [
    "pip install notebook", "jupyter notebook assignments/why17/why17.ipynb",
    "jupyter nbconvert --to notebook --execute --inplace assignments/why17/why17.ipynb",
    f"{settings.RUN_ON.name}=sim jupyter notebook", "assignments/why17/measurements.json", "*Run All*",
])
def test_the_readme_says_how_to_run_the_notebook(needle):
    assert needle in section(_readme(), "Running the lab notebook (task5)")


def test_the_jupyter_install_is_the_one_the_bundles_requirements_name():
    from autograder.exports import bundle
    assert "pip install notebook" in bundle.REQUIREMENTS_HEAD and "pip install notebook" in _readme()


@pytest.mark.slow
def test_the_nbconvert_command_takes_the_readmes_flags():
    proc = subprocess.run([sys.executable, "-m", "nbconvert", "--help-all"], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for flag in ("--execute", "--inplace", "--to"):
        assert flag in proc.stdout


def test_every_release_path_the_readme_names_exists():
    from autograder.exports import generate
    release = set(generate.release_files(ASSIGNMENT))
    named = set(re.findall(r"assignments/why17/([\w./-]+\w)", _readme()))
    assert named, "the README names files of the release"
    written_by_the_notebook = {"measurements.json"}
    assert named - written_by_the_notebook <= release | {n.rstrip("/") for n in release}, named - release


def test_the_environment_variables_are_the_notebooks():
    """The README names the variables the notebook reads (through shared/settings.py), RUN_ON's
    choices and default, SIM_PROFILE's default, and models that exist."""
    code = _notebook_code()
    read = {s.name for s in settings.ALL if f"settings.{_attribute(s)}.get()" in code}
    assert set(re.findall(r"WHY17_\w+", _readme())) == read
    text = section(_readme(), "Running the lab notebook (task5)")
    table = set(re.findall(r"^\| `(\w+)`", text, flags=re.M)) - {settings.RUN_ON.name}
    assert table == set(settings.RUN_ON.choices) and f"`{settings.RUN_ON.default}` (or unset)" in text
    profile = settings.SIM_PROFILE.default
    assert f"default `{profile}`" in text and tables.device(profile)
    models = re.search(settings.MEASURE_MODELS.name + r"=([\w.,-]+)", text).group(1).split(",")
    assert all(tables.model(key) for key in models)


def _attribute(setting: settings.Setting) -> str:
    """The name ``setting`` is bound to in shared/settings.py (``RUN_ON`` for the notebook's device)."""
    return next(k for k, v in vars(settings).items() if v is setting)


@pytest.mark.slow
def test_the_helpers_the_readme_names_exist_with_those_arguments():
    import importlib
    import inspect
    text = section(_readme(), "Helpers you may use")
    bullets = re.findall(r"^- `shared\.(\w+)`: (.*?)(?=^- |\Z)", text, flags=re.M | re.S)
    assert {name for name, _ in bullets} >= {"devices", "validate", "tables"}
    for name, body in bullets:
        module = importlib.import_module(f"shared.{name}")
        for function, args in re.findall(r"`(\w+)\(([\w, ]*)\)", body):
            assert hasattr(module, function), f"shared.{name} has no {function}"
            params = list(inspect.signature(getattr(module, function)).parameters)
            assert [a.strip() for a in args.split(",") if a.strip()] == params[:len(args.split(","))], \
                f"shared.{name}.{function}{tuple(params)}"


@pytest.mark.parametrize("module", ["shared.simgpu", "shared.decode_bench", "shared.quiz"])
def test_the_commands_the_readme_names_run(module):
    assert f"python -m {module}" in _readme()
    proc = subprocess.run([sys.executable, "-m", module, "--help"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0 and "usage" in proc.stdout.lower(), proc.stderr[-2000:]


def test_the_quiz_focus_example_names_one_section():
    from shared.quiz import bank, session
    focus = re.search(r"python -m shared\.quiz --focus (\w+)", _readme()).group(1)
    assert session.focus_section(bank.load(), focus) == "Every way around the wall: batching"


#: The lesson's headline mistakes as the README names them, and the course.yml checks each one fails.
HEADLINE = {
    "Bytes counted once": ["bytes_counted_twice"],
    "No synchronize before reading the clock": ["sync_present"],
    "A buffer that fits in the cache": ["buffer_exceeds_cache"],
    "No warm-up": ["warmup_present"],
    "n³ instead of 2·n³ FLOPs": ["flops_counted_2n3"],
    "GiB/s or bytes/s where GB/s is asked": ["units_gb_per_s"],
    "The 1e9 left out": ["decode_moe_active", "decode_quantized", "law_batch1_is_predict"],
    "K and V: the factor 2 left out": ["kv_bytes_gqa"],
    "Weights re-read per stream": ["ceiling_batch_shares_weights"],
    "max instead of min": ["attainable_two_roofs", "law_roofline_min", "law_ridge_meets"],
    "Linear axes": ["roofline_loglog"],
}
#: How many times the dearest input check each headline mistake must cost at least ("several times").
SEVERAL = 3


def _is_input_check(check_id: str) -> bool:
    return check_id.startswith("errors_") or check_id.endswith("_rejects_bad")


def test_the_readme_names_each_headline_mistake_without_point_figures():
    text = section(_readme(), "Which mistakes cost most")
    for mistake in HEADLINE:
        assert f"**{mistake}**" in text, mistake
    assert not re.search(r"\d\s*points?\b", text), "point figures drift: course.yml has them"


def test_course_yml_backs_the_readmes_claim_that_headline_mistakes_cost_several_input_checks():
    points = {check: p for task in ASSIGNMENT.tasks for check, p in task.check_points}
    inputs = [p for check, p in points.items() if _is_input_check(check)]
    assert inputs, "course.yml gives points to the input checks (errors_*, *_rejects_bad)"
    for mistake, checks in HEADLINE.items():
        unknown = [c for c in checks if c not in points]
        assert not unknown, f"{mistake}: course.yml has no points for {unknown}"
        cost = sum(points[c] for c in checks)
        assert cost >= SEVERAL * max(inputs), f"{mistake} costs {cost}, a missing input check up to {max(inputs)}"


def explain_it_back_claims(readme: str, notebook: str, assignment) -> list[str]:
    """Where the README and the notebook disagree with course.yml on what Explain It Back earns:
    hand-graded for the points of a ``manual:`` item of course.yml naming it, else feedback only."""
    items = [m for m in assignment.manual if "explain" in f"{m.id} {m.title}".lower()]
    texts = {"README": " ".join(readme.split()), "notebook": " ".join(notebook.split())}
    problems = []
    for where, text in texts.items():
        if items:
            if f"{items[0].points:g} points" not in text or "earn no points" in text:
                problems.append(f"{where}: course.yml grades Explain It Back for {items[0].points:g} points")
        elif "earn no points" not in text or re.search(r"graded (by hand|by a person)|hand-graded for", text):
            problems.append(f"{where}: course.yml declares no points for Explain It Back: say 'earn no points'")
    return problems


def _notebook_text() -> str:
    import json
    cells = json.loads((ROOT / "solutions/why17/why17.ipynb").read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells)


def test_readme_notebook_and_course_yml_agree_on_what_explain_it_back_earns():
    assert explain_it_back_claims(README.read_text(encoding="utf-8"), _notebook_text(), ASSIGNMENT) == []


def test_a_readme_that_still_says_graded_by_hand_is_caught():
    text = README.read_text(encoding="utf-8").replace("earn no points", "are graded by hand")
    assert explain_it_back_claims(text, _notebook_text(), ASSIGNMENT) == [
        "README: course.yml declares no points for Explain It Back: say 'earn no points'"]


def test_the_readme_names_each_stub_of_the_released_notebook():
    # A student whose Run All stops at a notebook cell finds that cell's message in the task list.
    import json
    cells = json.loads((ROOT / "assignments/why17/why17.ipynb").read_text(encoding="utf-8"))["cells"]
    code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
    stubs = re.findall(r"NotImplementedError\((['\"])(.+?)\1\)", code)
    assert stubs, "the released notebook leaves a cell for the student"
    tasks = section(_readme(), "Tasks")
    for _, message in stubs:
        assert message in tasks, message


def laptop_spread(readme: str) -> list[tuple[float, float, float]]:
    """The README's warning that laptop numbers move: each spread it shows as (lowest, highest, the
    'N.Nx' it quotes for them), from its 'On a laptop, numbers move' paragraph; [] without one."""
    text = " ".join(readme.split())
    if "**On a laptop, numbers move.**" not in text:
        return []
    section = text.split("**On a laptop, numbers move.**", 1)[1].split("**", 1)[0]
    found = [(float(lo), float(hi), float(r)) for lo, _, hi, r in
             re.findall(r"min ([\d.]+), (median [\d.]+, )?max ([\d.]+) GB/s \(([\d.]+)x\)", section)]
    found += [(float(lo), float(hi), float(r)) for lo, hi, r in
              re.findall(r"([\d.]+) to ([\d.]+) over an hour \(([\d.]+)x\)", section)]
    return found


def test_the_readme_warns_that_laptop_runs_move_and_shows_the_spread():
    """Runs on a busy laptop differ: the README says so, quotes measured spreads whose 'N.Nx' is their
    own highest over lowest, and says why each figure is a median of 3 runs with its min-max."""
    readme = README.read_text(encoding="utf-8")
    spreads = laptop_spread(readme)
    assert len(spreads) >= 2, spreads
    for low, high, quoted in spreads:
        assert low < high and round(high / low, 1) == quoted, (low, high, quoted)
    assert "runs 3 times and is quoted as the median with its min-max" in " ".join(readme.split())
    assert laptop_spread(readme.replace("numbers move.**", "numbers are exact.**")) == []

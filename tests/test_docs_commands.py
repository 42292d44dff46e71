"""Every command shown in README.md, docs/*.md and the student README exists as written, and the
cheap ones run.

The convention (docs/maintaining.md, "Commands in the docs"):

- a command is a line of a fenced block tagged ``sh``; a trailing ``\\`` continues it on the next
  line, ``#`` starts a comment; every command runs from the checkout root (for the student README,
  the top folder of the student bundle, which holds the same course.yml, shared/ and assignments/:
  tests/lessons/why17/test_student_readme_commands.py also runs them in the unpacked bundle);
- every other fence carries a tag saying what it holds (``text``, ``yaml``, ``json``, ``python``)
  and holds no line that starts like a command, so nothing escapes the check by its fence;
- a command that ends in ``--help``, a ``python -c`` one-liner, or a command listed in
  RUN_AS_WRITTEN is run as written (a leading ``python`` or ``.venv/bin/python`` is this
  interpreter) and must exit 0 without a traceback;
- every other command is checked without running it: its program exists, its module and its
  subcommand exist, every option it uses appears in that subcommand's ``--help``, every
  repository path it names exists, and every ``make`` target is in the Makefile.

Paths and modules named in the prose's inline code, and links between the pages, must exist too.
"""
from __future__ import annotations

import functools
import importlib.util
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.markdown_commands import COMMAND_TAGS, Command, extract, fences
from tests.helpers.paths import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
#: The student README: its commands are checked too (from the top folder, which the checkout root is).
STUDENT_README = ROOT / "solutions" / "why17" / "README.md"
COMMAND_PAGES = [*PAGES, STUDENT_README]
#: Shell builtins a page may use; they change the shell, there is nothing of ours to check.
BUILTINS = ("cd", ".", "source")
#: Programs a page names that this machine need not have, and why.
NOT_INSTALLED_HERE = {"docker": "the student README's Intel-Mac route (a Linux container); not a test dependency"}
#: How a line outside a command fence may not start (it would escape the check).
COMMAND_STARTS = ("python ", "python3 ", ".venv/bin/", "make ", "pytest ", "nbgrader ", "pip ", "$ ")
#: Spellings of the project's interpreter at the start of a command.
PYTHONS = ("python", "python3", ".venv/bin/python")
#: Commands without --help that are cheap enough to run as written (each must appear in a page).
RUN_AS_WRITTEN = ("python -m autograder generate --check",)
#: Tools whose first argument is a subcommand listed in ``TOOL --help``.
TOOLS_WITH_SUBCOMMANDS = ("nbgrader", "pip")
#: What a token must start with to be a path inside this repository.
REPO_TOP = ("solutions/", "assignments/", "autograder/", "shared/", "tests/", "bench/", "docs/", ".ci/")
REPO_FILES = ("course.yml", "Makefile", "requirements.txt", "pyproject.toml", "README.md")
ENV_ASSIGNMENT = re.compile(r"^[A-Z_][A-Z0-9_]*=")
SECONDS = 120


def fence_problems(text: str, page: str = "<text>") -> list[str]:
    """Fences without a tag, and command-like lines outside the ``sh`` fences."""
    problems = []
    for start, tag, lines in fences(text):
        if not tag:
            problems.append(f"{page}:{start}: a fence without a tag (```sh for commands, ```text for the rest)")
        elif tag not in COMMAND_TAGS:
            problems += [f"{page}:{number}: a command outside a ```sh fence is never checked: {line.strip()}"
                         for number, line in lines if line.lstrip().startswith(COMMAND_STARTS)]
    return problems


@functools.cache
def _output(argv: tuple[str, ...], env: tuple[tuple[str, str], ...] = ()) -> tuple[int, str]:
    """Exit status and stdout+stderr of ``argv`` run from the checkout root (cached)."""
    try:
        done = subprocess.run(list(argv), cwd=ROOT, capture_output=True, text=True, timeout=SECONDS,
                              env={**os.environ, **dict(env)})
    except OSError as exc:
        return 127, str(exc)
    return done.returncode, done.stdout + done.stderr


def _program(name: str) -> str | None:
    """Where a program named in a command is: the venv's bin folder first, then PATH."""
    here = Path(sys.executable).parent / name
    return str(here) if here.is_file() else shutil.which(name)


@functools.cache
def _make_targets() -> frozenset[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return frozenset(re.findall(r"^([A-Za-z0-9_.-]+)\s*:(?!=)", text, flags=re.M))


def _subcommands(help_text: str) -> list[str] | None:
    """An argparse help's subcommand choices (its ``{a,b,c}`` positional), or None when it has none."""
    found = re.search(r"^\s+\{([\w,-]+)\}\s*$", help_text, flags=re.M)
    return found.group(1).split(",") if found else None


def _mentions(help_text: str, option: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(option)}(?![\w-])", help_text) is not None


def _options(tokens: list[str]) -> list[str]:
    return [t.split("=", 1)[0] for t in tokens if t.startswith("-") and t != "-"]


def _path_problems(tokens: list[str]) -> list[str]:
    """Repository paths among ``tokens`` (alone or as ``--opt=path``) that do not exist."""
    problems = []
    for token in tokens:
        path = token.split("=", 1)[1] if token.startswith("-") and "=" in token else token
        if path.startswith(REPO_TOP) or path in REPO_FILES:
            if not any(ROOT.glob(path.rstrip("/"))):
                problems.append(f"no such path in the repository: {path}")
    return problems


def _named_earlier(program: str, earlier: list[str]) -> bool:
    """Whether ``program`` lies under a folder (or is a file) that an earlier command named."""
    for token in earlier:
        token = token.split("=", 1)[-1]
        if token.startswith("/") and (program == token or program.startswith(token.rstrip("/") + "/")):
            return True
    return False


def _split_env(argv: list[str]) -> tuple[dict[str, str], list[str]]:
    env = {}
    while argv and ENV_ASSIGNMENT.match(argv[0]):
        name, value = argv[0].split("=", 1)
        env[name] = value.replace("$PWD", str(ROOT))
        argv = argv[1:]
    return env, argv


def _python_problems(args: list[str]) -> list[str]:
    """``python -m MODULE [SUB] ...`` or ``python SCRIPT ...``: module or script, subcommand, options."""
    if args[:1] == ["-m"] and len(args) >= 2:
        module, rest = args[1], args[2:]
        if importlib.util.find_spec(module) is None:
            return [f"no module {module}"]
        prefix = [sys.executable, "-m", module]
    elif args[:1] == ["-c"] and len(args) == 2:
        return []                    # code on the command line: always run (is_cheap)
    elif args and args[0].endswith(".py"):
        script, rest = args[0], args[1:]
        if not (ROOT / script).is_file():
            return [f"no such script: {script}"]
        prefix = [sys.executable, script]
    else:
        return [f"not a module or script run: python {' '.join(args)}"]
    problems = _path_problems(rest)
    if not rest:
        return problems
    status, text = _output((*prefix, "--help"))
    if status != 0:
        if not _options(rest):       # a plain-argv entry point (no argparse): nothing more to check
            return problems
        return problems + [f"{' '.join(prefix[1:])} --help exits {status}: {text.strip()[-200:]}"]
    choices = _subcommands(text)
    sub = _first_positional(rest, text) if choices is not None else None
    if sub is not None:
        if sub not in choices:
            return problems + [f"no subcommand {sub!r} of {prefix[-1]} (it has {', '.join(choices)})"]
        status, sub_text = _output((*prefix, sub, "--help"))
        if status != 0:
            return problems + [f"{prefix[-1]} {sub} --help exits {status}"]
        text += sub_text             # an option may be the command's own or a global one
    where = " ".join(prefix[1:]) + (f" {sub}" if sub else "")
    problems += [f"option {opt} is not in the --help of {where}" for opt in _options(rest) if not _mentions(text, opt)]
    return problems


def _first_positional(tokens: list[str], help_text: str) -> str | None:
    """The first token that is neither an option nor the value of one (``--course PATH grade``:
    grade); an option takes a value when the help's usage shows it with a metavar."""
    valued = set(re.findall(r"\[(--?[\w-]+) [A-Z][\w-]*\]", help_text))
    skip = False
    for token in tokens:
        if skip:
            skip = False
        elif token.startswith("-"):
            skip = "=" not in token and token in valued
        else:
            return token
    return None


def _tool_problems(tool: str, path: str, rest: list[str]) -> list[str]:
    """``TOOL SUB [options]`` for a tool whose subcommands its --help lists (nbgrader, pip)."""
    if not rest or rest[0].startswith("-"):
        return []
    status, text = _output((path, "--help"))
    if status != 0 or not re.search(rf"^\s*{re.escape(rest[0])}\b", text, flags=re.M):
        return [f"no subcommand {rest[0]!r} of {tool}"]
    options = _options(rest[1:])
    if not options:
        return []
    status, text = _output((path, rest[0], "--help"))
    return [f"option {opt} is not in the --help of {tool} {rest[0]}" for opt in options
            if status != 0 or not _mentions(text, opt)]


def command_problems(command: Command, earlier: list[str] = ()) -> list[str]:
    """Why ``command`` would not run as written (empty when it would). ``earlier``: the tokens of
    the commands before it in the same fence (a program may lie in a folder they made)."""
    _env, argv = _split_env(command.argv)
    if not argv:
        return ["a command with no program"]
    program, rest = argv[0], argv[1:]
    if program in PYTHONS:
        return _python_problems(rest)
    if program == "pytest":
        return _python_problems(["-m", "pytest", *rest])
    if program == "make":
        return [f"no make target {t!r} in the Makefile" for t in rest
                if not t.startswith("-") and "=" not in t and t not in _make_targets()]
    if program in BUILTINS or program in NOT_INSTALLED_HERE:
        return []
    if program in TOOLS_WITH_SUBCOMMANDS:
        path = _program(program)
        return [f"no program {program} in the venv or on PATH"] if path is None else _tool_problems(program, path, rest)
    if "/" in program:
        if (ROOT / program).is_file() or _named_earlier(program, list(earlier)):
            return _path_problems(rest)
        return [f"no such program: {program}"]
    if _program(program) is None:
        return [f"no program {program} in the venv or on PATH"]
    return _path_problems(rest)


def is_cheap(command: Command) -> bool:
    """Run as written: a --help, a ``python -c`` one-liner, or a command of RUN_AS_WRITTEN."""
    _env, argv = _split_env(command.argv)
    return bool(argv) and (argv[-1] in ("--help", "-h") or (argv[0] in PYTHONS and argv[1:2] == ["-c"])
                           or shlex.join(argv) in {shlex.join(shlex.split(c)) for c in RUN_AS_WRITTEN})


def run_problems(command: Command) -> list[str]:
    """Run a cheap command as written; what went wrong (empty when it exited 0 without a traceback)."""
    env, argv = _split_env(command.argv)
    if argv[0] in PYTHONS:
        argv = [sys.executable, *argv[1:]]
    status, text = _output(tuple(argv), tuple(sorted(env.items())))
    problems = [f"exit status {status}: {text.strip()[-300:]}"] if status != 0 else []
    if "Traceback (most recent call last)" in text:
        problems.append("printed a traceback")
    return problems


def all_commands() -> list[Command]:
    return [c for page in COMMAND_PAGES
            for c in extract(page.read_text(encoding="utf-8"), page.relative_to(ROOT).as_posix())]


def _earlier(command: Command, commands: list[Command]) -> list[str]:
    return [t for c in commands if c.page == command.page and c.fence == command.fence and c.line < command.line
            for t in c.argv]


# -- the extractor and the checker, on text made up here ---------------------------------------

SAMPLE = """\
Prose with `python -m autograder grade` inline is not a command.

```sh
python -m autograder grade solutions/why17 --out /tmp/r.json   # a comment
python -m autograder grade-all out/class --out out/grades \\
    --jobs 2 --checks sync_present
# a comment line
make demo
```

```text
usage: shown, not run
```
"""


def test_extractor_reads_sh_fences_joins_continuations_and_skips_comments():
    commands = extract(SAMPLE)
    assert [(c.line, c.text) for c in commands] == [
        (4, "python -m autograder grade solutions/why17 --out /tmp/r.json   # a comment"),
        (5, "python -m autograder grade-all out/class --out out/grades      --jobs 2 --checks sync_present"),
        (8, "make demo"),
    ]
    assert commands[0].argv == ["python", "-m", "autograder", "grade", "solutions/why17", "--out", "/tmp/r.json"]
    assert fence_problems(SAMPLE) == []


@pytest.mark.parametrize("text", [
    "python -m autograder --course course.yml grade solutions/why17 --out /tmp/r.json",
    "python -m autograder grade solutions/why17 --course=course.yml",
    ".venv/bin/python -m pytest -q tests/test_docs_commands.py -k extractor",
    "python bench/grade_all.py -n 40 --checks quick",
    "cd /tmp/anywhere",
    "python -m autograder.lessons.why17.fixtures.build wrong/kv_without_2 /tmp/fixture",
])
def test_commands_that_exist_pass_the_check(text):
    commands = extract(SAMPLE) + extract(f"```sh\n{text}\n```\n")
    assert {c.text: command_problems(c) for c in commands} == {c.text: [] for c in commands}


@pytest.mark.parametrize("text, why", [
    ("python -m autograder grade-everything out/class", "no subcommand 'grade-everything'"),
    ("python -m autograder grade solutions/why17 --no-such-option", "option --no-such-option"),
    ("python -m autograder --course course.yml grade-everything x", "no subcommand 'grade-everything'"),
    ("python -m autograder --no-such-global grade solutions/why17", "option --no-such-global"),
    ("python -m autograder grade-all out/class --out o --sbatch-args=--qos=x", "option --sbatch-args"),
    ("python -m autograder grade solutions/no_such_folder", "no such path in the repository"),
    ("python -m shared.no_such_module", "no module shared.no_such_module"),
    ("python bench/no_such_bench.py", "no such script"),
    ("make no-such-target", "no make target 'no-such-target'"),
    ("pytest tests/test_no_such_file.py", "no such path"),
    ("nbgrader generate_everything why17", "no subcommand 'generate_everything' of nbgrader"),
    ("solutions/no_such_folder/run_autograder", "no such program"),
    ("no-such-program-anywhere --flag", "no program no-such-program-anywhere"),
])
def test_commands_that_do_not_exist_fail_the_check(text, why):
    [command] = extract(f"```sh\n{text}\n```\n")
    problems = command_problems(command)
    assert any(why in p for p in problems), problems


def test_a_program_made_by_an_earlier_command_of_the_fence_is_accepted(tmp_path):
    """The program lies in a folder of this test's own (a fixed /tmp path may hold a leftover)."""
    gs = tmp_path / "gs"
    block = f"```sh\nunzip -q x.zip -d {gs}/source\n{gs}/source/run_autograder\n```\n"
    first, second = extract(block)
    assert command_problems(second, earlier=first.argv) == []
    assert command_problems(second) != []


def test_a_cheap_command_that_fails_is_reported():
    [command] = extract("```sh\npython -m shared.no_such_module --help\n```\n")
    assert is_cheap(command)
    assert any("exit status" in p for p in run_problems(command))


def test_untagged_fences_and_commands_in_other_fences_are_refused():
    text = "```\nmake demo\n```\n\n```text\npython -m autograder grade x\n```\n"
    problems = fence_problems(text)
    assert len(problems) == 2
    assert "without a tag" in problems[0] and "outside a ```sh fence" in problems[1]


# -- the real pages ----------------------------------------------------------------------------

COMMANDS = all_commands()


def test_the_pages_show_commands():
    assert (ROOT / "docs").is_dir()
    assert len(COMMANDS) >= 20
    assert {c.page for c in COMMANDS} >= {"README.md", "solutions/why17/README.md"}
    assert sum(is_cheap(c) for c in COMMANDS) >= 4


@pytest.mark.parametrize("page", COMMAND_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_no_command_hides_outside_a_sh_fence(page):
    assert fence_problems(page.read_text(encoding="utf-8"), page.name) == []


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: f"{c.page}:{c.line}")
def test_every_command_shown_exists_and_the_cheap_ones_run(command):
    problems = command_problems(command, _earlier(command, COMMANDS))
    if is_cheap(command):
        problems += run_problems(command)
    assert problems == [], f"{command.page}:{command.line}: {command.text}"


def test_every_command_run_as_written_is_still_shown():
    shown = {shlex.join(c.argv) for c in COMMANDS}
    assert [c for c in RUN_AS_WRITTEN if shlex.join(shlex.split(c)) not in shown] == []


# -- paths, modules and links in the prose -----------------------------------------------------

def _code_tokens(text: str) -> list[str]:
    """Whitespace-separated tokens of the inline code spans (fences removed)."""
    prose = re.sub(r"^```.*?^```", "", text, flags=re.M | re.S)
    return [t for span in re.findall(r"`([^`\n]+)`", prose) for t in span.split()]


def _dotted_problem(name: str) -> str | None:
    """``autograder.x.y.attr``: the longest module prefix is a file, and the rest is defined in it."""
    parts = name.split(".")
    for cut in range(len(parts), 1, -1):
        base = ROOT.joinpath(*parts[:cut])
        for file in (base.with_suffix(".py"), base / "__init__.py"):
            if file.is_file():
                rest = parts[cut:]
                if not rest:
                    return None
                source = file.read_text(encoding="utf-8")
                word = re.escape(rest[0])   # defined, assigned, imported, or a lazy table's key
                pattern = rf"(?:def|class)\s+{word}\b|^\s*{word}\s*[:=]|import [^\n]*\b{word}\b|[\"']{word}[\"']"
                if re.search(pattern, source, flags=re.M):
                    return None
                return f"{name}: {rest[0]} is not in {file.relative_to(ROOT)}"
    return f"{name}: no such module"


def test_the_extra_checks_of_the_prose_catch_stale_names():
    assert _dotted_problem("autograder.grading.grade.grade_submission") is None
    assert _dotted_problem("autograder.grading.grade.no_such_function") is not None
    assert _dotted_problem("autograder.no_such_package.grade") is not None
    assert _path_problems(["autograder/sandbox/isolation.py", "tests/shared/test_decode_*.py"]) == []
    assert _path_problems(["autograder/sandbox.py"]) != []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_paths_and_modules_named_in_the_prose_exist(page):
    problems = []
    for token in _code_tokens(page.read_text(encoding="utf-8")):
        token = token.strip(",;:()")
        path = re.sub(r"<[^>/]+>", "*", token)
        problems += _path_problems([path])
        dotted = re.fullmatch(r"((?:autograder|shared)(?:\.\w+)+)(?:\(.*)?", token)
        if dotted and not token.endswith(".py") and not token.endswith(".yml"):
            problem = _dotted_problem(dotted.group(1))
            problems += [problem] if problem else []
    assert problems == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_links_between_pages_resolve(page):
    text = page.read_text(encoding="utf-8")
    targets = [t for t in re.findall(r"\]\(([^)\s]+)\)", text) if "://" not in t and not t.startswith("#")]
    missing = [t for t in targets if not (page.parent / t.split("#", 1)[0]).exists()]
    assert missing == []

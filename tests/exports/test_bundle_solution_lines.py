"""No line of a solution region ships to students: every graded line between ``### BEGIN SOLUTION``
and ``### END SOLUTION`` in solutions/why17 (the .py files and the notebook's cells) is looked for in
every text file of the built student bundle (``bundle.build``, what ``python -m autograder release``
writes), shared/ included.

The rule for "a graded line": a line of a region, stripped of its indentation, that is not blank, not
a comment, and holds at least two words that are not Python keywords (so ``return fig``,
``continue``, ``try:``, ``results = {}`` are skipped: they say nothing about whose code they are).
A bundle file holds the line when one of its lines, stripped, equals it; a notebook is read cell by
cell. Docstrings that state a formula (``step_bytes = params_read * ... ,``) are the contract, not a
solution, and do not equal the solution's line.

IDIOMS lists the few graded lines that shared/ holds by design, each with its reason; the test fails
when an idiom stops being needed, so the list cannot grow stale and hide a new leak.
"""
from __future__ import annotations

import json
import keyword
import re
import zipfile
from pathlib import Path

import pytest

from autograder.core import course
from autograder.exports import bundle
from tests.helpers.paths import ROOT

ASSIGNMENT = course.load().assignment("why17")
SOLUTIONS = ROOT / "solutions" / "why17"
BEGIN, END = "### BEGIN SOLUTION", "### END SOLUTION"
_WORD = re.compile(r"[A-Za-z_]\w*|\d[\w.]*|\"[^\"]*\"|'[^']*'")

#: Graded lines that shared/ may hold, and why. Nothing else of a solution region may ship.
IDIOMS = {
    # The clock read that starts every timed loop; shared/decode's bandwidth meter and decode
    # benchmark need it. No check grades the line itself: the checks grade the synchronize and the
    # warm-up around it.
    "start = time.perf_counter()": "shared/decode/bandwidth.py",
    # The argument check the docstring spells out, written with the students' own helper
    # (shared.validate); shared/decode/ceiling.py checks the same argument the same way.
    'bw_gbs = validate.positive("bw_gbs", bw_gbs, "GB/s")': "shared/decode/ceiling.py",
}


def is_graded(line: str) -> bool:
    """Whether a stripped line of a solution region counts (see the module docstring)."""
    if not line or line.startswith("#"):
        return False
    return len([w for w in _WORD.findall(line) if w not in keyword.kwlist]) >= 2


def _sources(name: str, data: bytes) -> list[str]:
    """A file's text; a notebook's cell sources, one text per cell."""
    text = data.decode("utf-8")
    if name.endswith(".ipynb"):
        cells = json.loads(text).get("cells", [])
        return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]
    return [text]


def region_lines(name: str, text: str) -> list[tuple[str, int, str]]:
    """(where, line number, stripped line) for every graded line inside the regions of ``text``."""
    found, inside = [], False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped in (BEGIN, END):
            inside = stripped == BEGIN
        elif inside and is_graded(stripped):
            found.append((name, number, stripped))
    return found


def solution_lines(folder: Path = SOLUTIONS) -> list[tuple[str, int, str]]:
    """Every graded line of every solution region in ``folder``'s .py files and notebook cells."""
    found = []
    for path in sorted(folder.glob("*.py")):
        found += region_lines(path.name, path.read_text(encoding="utf-8"))
    for path in sorted(folder.glob("*.ipynb")):
        for i, cell in enumerate(_sources(path.name, path.read_bytes())):
            found += region_lines(f"{path.name} cell {i}", cell)
    return found


def bundle_lines(zip_path: Path) -> dict[str, set[str]]:
    """Stripped line -> the bundle's files that hold it, for every text file of the zip."""
    where: dict[str, set[str]] = {}
    with zipfile.ZipFile(zip_path) as zf:
        for name in zf.namelist():
            try:
                texts = _sources(name, zf.read(name))
            except UnicodeDecodeError:
                continue                                   # not a text file
            for text in texts:
                for line in text.splitlines():
                    where.setdefault(line.strip(), set()).add(name.split("/", 1)[1])
    return where


def leaks(zip_path: Path, lines) -> list[str]:
    """'solution file:line: text -> bundle files' for every graded line the zip holds (idioms excepted)."""
    shipped = bundle_lines(zip_path)
    return [f"{name}:{number}: {text} -> {', '.join(sorted(shipped[text]))}"
            for name, number, text in lines if text in shipped and text not in IDIOMS]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    return bundle.build(ASSIGNMENT, tmp_path_factory.mktemp("bundle"))


def test_the_rule_keeps_code_and_skips_blank_comment_and_one_word_lines():
    assert is_graded("return 2 * n_bytes * iters / seconds / 1e9")
    assert is_graded("dst.copy_(src)") and is_graded("ax.set_xscale(\"log\", base=2)")
    for line in ("", "# warm up first", "return fig", "continue", "try:", "else:", "results = {}", ")"):
        assert not is_graded(line), line


def test_the_solutions_give_many_graded_lines_from_every_file():
    lines = solution_lines()
    assert len(lines) >= 100
    assert {name.split(" ")[0] for name, _, _ in lines} == {"bw.py", "flops.py", "predict.py", "roofline.py",
                                                            "why17.ipynb"}


def test_no_graded_solution_line_is_in_the_student_bundle(built):
    assert leaks(built, solution_lines()) == []


def test_each_idiom_is_still_a_solution_line_and_still_needed_where_it_says(built):
    lines = {text for _, _, text in solution_lines()}
    shipped = bundle_lines(built)
    for idiom, holder in IDIOMS.items():
        assert idiom in lines, f"{idiom!r} is no longer in a solution region: drop it from IDIOMS"
        assert holder in shipped.get(idiom, set()), f"{holder} no longer holds {idiom!r}: drop it from IDIOMS"


def test_a_planted_solution_line_is_found(built, tmp_path):
    # The scan can fail: the headline line of copy_bandwidth, hidden in a comment of a shared/ module
    # and as a line of the student notebook, is reported for both.
    headline = "return 2 * n_bytes * iters / seconds / 1e9"
    assert headline in {text for _, _, text in solution_lines()}
    planted = tmp_path / "planted.zip"
    with zipfile.ZipFile(built) as src, zipfile.ZipFile(planted, "w") as dst:
        for name in src.namelist():
            data = src.read(name)
            if name.endswith("shared/tables.py"):
                data += f"\n#\n    {headline}\n".encode()
            if name.endswith("assignments/why17/why17.ipynb"):
                nb = json.loads(data)
                nb["cells"][-1]["source"] = ["def f(n_bytes, iters, seconds):\n", f"    {headline}\n"]
                data = json.dumps(nb).encode()
            dst.writestr(name, data)
    found = [x for x in leaks(planted, solution_lines()) if headline in x]
    assert found and "shared/tables.py" in found[0] and "assignments/why17/why17.ipynb" in found[0]

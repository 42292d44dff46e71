"""The quiz covers the interview card and says what it means: docs/quiz.md's coverage table names every
kind of drill once (and the sections each rereads), every slip a drill carries can be named, no part
header is printed without questions, and numbers typed the way people type them are marked right."""
import random
import re

import pytest

from shared.quiz import answers, bank, drills, session, slips
from tests.helpers.paths import ROOT
from tests.shared.drills import TOL

PAGE = ROOT / "docs" / "quiz.md"
SEEDS = range(40)


def coverage_rows() -> list[tuple[str, str, str]]:
    """(drill id, card item, reread cell) of each row of the page's coverage table."""
    text = PAGE.read_text(encoding="utf-8")
    section = text.split("## Coverage of the interview card", 1)[1].split("\n## ", 1)[0]
    return [tuple(c.strip() for c in m) for m in re.findall(r"^\| `(\w+)` \|([^|]+)\|([^|]+)\|$", section, re.M)]


def test_the_coverage_table_names_every_drill_once_and_nothing_else():
    ids = [row[0] for row in coverage_rows()]
    kinds = [k.__name__ for k in drills.KINDS]
    assert len(ids) == len(set(ids)), f"named twice: {sorted({i for i in ids if ids.count(i) > 1})}"
    assert set(ids) - set(kinds) == set(), "rows for drills that do not exist"
    assert set(kinds) - set(ids) == set(), "drills missing from the table"


def test_each_row_rereads_the_sections_its_drill_sends_a_miss_to():
    by_id = {k.__name__: k for k in drills.KINDS}
    for drill_id, item, cell in coverage_rows():
        rereads = {by_id[drill_id](random.Random(seed)).reread for seed in range(200)}
        assert rereads == set(cell.split("; ")), drill_id
        assert item


def test_the_card_items_the_brief_found_missing_each_have_a_row():
    items = " ".join(row[1] for row in coverage_rows())
    for words in ("70B parameters at 8 bits", "1,371 tokens/s", "one operation per byte", "turns compute-bound",
                  "more devices", "larger chip on the same memory", "GB/s per dollar", "active parameters",
                  "land below the ceiling", "time per token", "advantage of a mixture of experts erodes"):
        assert words in items, words


@pytest.mark.parametrize("kind", drills.KINDS, ids=lambda k: k.__name__)
def test_every_slip_a_wrong_answer_can_make_is_named(kind):
    """A slip whose answer is wrong (outside the tolerance, the right answer outside its) is kept,
    alone or named together with slips of the same answer, and its own answer is named after it."""
    for seed in SEEDS:
        d = kind(random.Random(seed))
        kept = slips.distinct(d.answer, d.slips, TOL)
        for slip in d.slips:
            wrong = slip.value > 0 and abs(slip.value - d.answer) > TOL * max(d.answer, slip.value)
            if not wrong:
                continue
            assert not d.accepts(slip.value, TOL)
            names = " | ".join(s.name for s in slips.matches(slip.value, kept, TOL))
            assert slip.name in names, (kind.__name__, seed, slip.name)


IN_BYTES = [k for k in drills.KINDS if k(random.Random(0)).unit in ("GB", "GB/s", "tokens/s", "ms")]
WITH_GIB = [k for k in drills.KINDS if any("GiB" in s.name for s in k(random.Random(0)).slips)]


def test_every_drill_of_bytes_or_bandwidth_carries_the_gib_slip():
    """Sizes, rates and the speeds and times computed from them: a GiB for a GB moves each by 1.074x."""
    assert {k.__name__ for k in IN_BYTES} >= {"decode_ceiling", "card_ceiling", "card_batch", "split_devices",
                                              "bigger_chip", "measured_ceiling", "batch_total", "time_per_token",
                                              "kv_at_context", "bandwidth_needed", "moe_batch"}
    missing = {k.__name__ for k in IN_BYTES} - {k.__name__ for k in WITH_GIB}
    assert missing == set()


@pytest.mark.parametrize("kind", WITH_GIB, ids=lambda k: k.__name__)
def test_a_gib_for_gb_answer_is_named_with_its_ratio_not_only_a_percentage(kind):
    """A GiB/GB mix-up is off by 2**30 / 1e9 = 1.074, one way or the other: named, with the ratio. (A
    compute-bound batch does not move with the bytes: there the mix-up gives the right answer.)"""
    named_somewhere = 0
    for seed in range(20):
        d = kind(random.Random(seed))
        kept = slips.distinct(d.answer, d.slips, TOL)
        ways = [d.answer / slips.GIB_PER_GB] if d.unit in ("GB", "GB/s") else \
            [d.answer / slips.GIB_PER_GB, d.answer * slips.GIB_PER_GB]
        for value in ways:
            if d.accepts(value, TOL) or (kind.__name__ == "batch_total" and "compute-bound" in d.worked):
                continue
            names = [s.name for s in slips.matches(value, kept, TOL)]
            assert any("GiB" in n and "1.074" in n for n in names), (kind.__name__, seed, value, names)
            assert slips.off_by(value, d.answer) in ("7% low", "7% high")
            named_somewhere += 1
    assert named_somewhere


class Collect:
    def __init__(self):
        self.lines = []

    def __call__(self, line=""):
        self.lines.append(line)

    @property
    def text(self):
        return "\n".join(self.lines)


def answer_lines(p, typed):
    lines = [typed(d) for d in p.drills]
    if p.statements:
        lines.append(" ".join(str(i) for i, s in enumerate(p.statements, 1) if s.costs) or "none")
    for _ in p.followups:
        lines += ["my attempt", "y"]
    return lines


def run(tmp_path, p, typed):
    path = tmp_path / "answers.txt"
    path.write_text("\n".join(answer_lines(p, typed)) + "\n", encoding="utf-8")
    out = Collect()
    score = session.run(bank.load(), p, answers.FileAnswers(path, write=out), out, offer=False)
    return score, out.text


def headers_without_questions(text: str) -> list[str]:
    """Every 'Part N' header whose part shows no question before the next header or the score."""
    bad = []
    blocks = re.split(r"^(?=Part \d|Score: )", text, flags=re.M)
    for block in blocks:
        if block.startswith("Part "):
            if not re.search(r"^\s*(\[\d+/\d+\]|\d+\. )", block, re.M):
                bad.append(block.splitlines()[0])
    return bad


@pytest.mark.parametrize("section", bank.load().sections)
def test_a_re_drill_of_any_section_asks_something_and_prints_no_empty_part(tmp_path, section):
    for seed in (1, 2, 3):
        p = session.focus_plan(bank.load(), seed, section)
        assert p.drills or p.statements or p.followups, section
        score, text = run(tmp_path, p, lambda d: f"{d.answer:.6g}")
        assert headers_without_questions(text) == [], text
        numbers_shown = [int(n) for n in re.findall(r"^Part (\d)", text, re.M)]
        assert numbers_shown == list(range(1, len(numbers_shown) + 1))
        assert score.points == score.asked


def test_the_checker_of_empty_parts_can_fail():
    text = "Part 1: drills (0)\n\nPart 2: which\n  1. a\nScore: 1/1"
    assert headers_without_questions(text) == ["Part 1: drills (0)"]


def typed_as_people_type(d) -> str:
    """The drill's answer in another spelling: a unit converted, thousands as k, or 'about'."""
    if d.unit == "GB/s":
        return f"{d.answer / 1000:.6g} TB/s"
    if d.unit == "ms":
        return f"~{d.answer / 1000:.6g} s"
    if d.unit == "GB":
        return f"{d.answer * 1e9 / 2**30:.6g} GiB"
    if d.answer >= 1000:
        return f"{d.answer / 1000:.6g}k"
    return f"about {d.answer:.6g} {d.unit}"


def test_answers_typed_as_people_type_them_score_full_marks(tmp_path):
    p = session.plan(bank.load(), 3, len(drills.KINDS))
    assert {d.unit for d in p.drills} >= {"GB/s", "ms", "GB", "tokens/s", "%", "x"}
    score, text = run(tmp_path, p, typed_as_people_type)
    assert score.drills == [True] * len(p.drills), text
    assert "wrong (you said" not in text


def test_a_gib_answer_to_a_gb_question_is_named_and_its_ratio_given(tmp_path):
    b = bank.load()

    def shows_the_slip(d):
        """A KV cache in GB whose GiB figure is no round figure of it (2 for 2.147 GB is both)."""
        gib = float(f"{d.answer * 1e9 / 2**30:.6g}")
        return d.unit == "GB" and "KV cache" in d.prompt and not d.accepts(gib, b.tolerance, b.round_tolerance)

    plans = (session.plan(b, seed, len(drills.KINDS)) for seed in range(3, 200))
    p = next(p for p in plans if any(shows_the_slip(d) for d in p.drills))
    i = next(i for i, d in enumerate(p.drills) if shows_the_slip(d))
    score, text = run(tmp_path, p, lambda d: f"{d.answer * 1e9 / 2**30:.6g}" if d is p.drills[i] else
                      f"{d.answer:.6g}")
    assert score.drills.count(False) == 1
    one_line = " ".join(text.split())
    assert "7% low)" in one_line
    assert "the classic slip: GiB given for GB (1 GiB = 2**30 B = 1.074 GB" in one_line

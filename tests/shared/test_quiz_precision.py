"""The quiz judges to an interview's precision: the card's own rounded figures are right, in a drill
and in a spoken answer alike, and a slip is named only when the number typed shows it."""
import random

import pytest

from shared.quiz import answers, bank, card_drills, session, slips, spoken
from tests.shared.drills import Collect


def ask(tmp_path, drill, typed: str) -> str:
    """What the quiz says to ``typed`` as the answer to ``drill`` alone."""
    path = tmp_path / "a.txt"
    path.write_text(typed + "\n")
    out = Collect()
    plan = session.Plan(seed=1, drills=[drill], statements=[], followups=[])
    session.run(bank.load(), plan, answers.FileAnswers(path, write=out), out, offer=False)
    return out.text


@pytest.mark.parametrize("typed", ["roughly 40", "about 43", "42.9", "~40 tok/s"])
def test_the_cards_own_round_figure_is_right_and_blames_no_slip(tmp_path, typed):
    text = ask(tmp_path, card_drills.card_ceiling(random.Random(0)), typed)
    assert "right:" in text and "wrong" not in text and "slip" not in text


def test_a_number_that_shows_the_gib_slip_is_named(tmp_path):
    """39.9 is no round figure: 42.86 / 1.074, the weights' size taken in GiB."""
    d = card_drills.card_ceiling(random.Random(0))
    text = ask(tmp_path, d, f"{d.answer / slips.GIB_PER_GB:.1f}")
    assert "wrong" in text and "GiB" in text


def test_a_round_figure_too_far_off_is_not_an_estimate():
    b = bank.load()
    d = card_drills.card_batch(random.Random(0))           # 1,371 tokens/s
    assert d.accepts(1400, b.tolerance, b.round_tolerance)
    assert not d.accepts(1000, b.tolerance, b.round_tolerance)


@pytest.mark.parametrize("value, answer, right", [
    (40, 42.857, True), (43, 42.857, True), (39.9, 42.857, False), (44, 42.857, True), (38, 42.857, False),
    (1000, 1371.4, False), (1400, 1371.4, True), (20, 17.06, False), (17, 17.06, True), (200, 209, True),
])
def test_right_to_an_interview_precision(value, answer, right):
    b = bank.load()
    assert slips.right(value, answer, b.tolerance, b.round_tolerance) is right


def test_the_spoken_answer_counts_the_cards_round_figure():
    b = bank.load()
    forty = next(s for s in b.spoken if any(p.number for p in s.key_points))
    point = next(p for p in forty.key_points if p.number)
    assert point.found_in("roughly 40 tokens per second on a 3 TB/s device", b.tolerance, b.round_tolerance)
    assert not point.found_in("roughly 39.9 tokens per second", b.tolerance, b.round_tolerance)


def test_spoken_mode_marks_the_round_figure_found(tmp_path):
    b = bank.load()
    forty = next(s for s in b.spoken if any(p.number for p in s.key_points))
    number_point = next(i for i, p in enumerate(forty.key_points, 1) if p.number)
    path = tmp_path / "a.txt"
    path.write_text("go\nstop\nroughly 40 tokens per second\nall\n")
    out = Collect()
    clock = iter([0.0, 30.0]).__next__
    spoken.run(b, spoken.SpokenPlan(1, [forty]), answers.FileAnswers(path, write=out), out, clock=clock)
    assert f"{number_point}. [x] {forty.key_points[number_point - 1].point}" in out.text

"""Free-text answers checked for their key points: the words and numbers the check finds, every model
answer passing its own check, and the learner's own mark deciding the score."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.quiz import answers, bank, keypoints, session
from tests.shared.drills import TOL

LAWS = settings(derandomize=True, deadline=None, database=None, max_examples=150)


def point(*ways, number=None):
    return keypoints.KeyPoint("p", tuple(tuple(w.split()) for w in ways), number)


@pytest.mark.parametrize("text, found", [
    ("It reads every weight again", True),        # "read weight": both word beginnings, in any order
    ("weights are read from memory", True),
    ("the weights stay put", False),               # "weight" alone is not the way
    ("READS WEIGHTS", True),
    ("bread and weight", False),                   # a word beginning, not any substring
])
def test_a_way_is_every_word_beginning_in_any_order(text, found):
    assert point("read weight").found_in(text, TOL) is found


@LAWS
@given(st.floats(min_value=0.5, max_value=5000), st.floats(min_value=-0.2, max_value=0.2))
def test_a_number_is_found_exactly_when_within_the_tolerance(target, off):
    typed = round(target * (1 + off), 1)
    text = f"the ceiling is about {typed:,} tokens per second"
    assert point(number=target).found_in(text, TOL) == (abs(typed - target) <= TOL * target)


def test_numbers_are_read_with_thousands_and_k():
    assert keypoints.numbers_in("about 1,371 tok/s, or 1.4k, and 42.9") == [1371, 1400, 42.9]
    assert keypoints.numbers_in("no digits here") == []


def every_item():
    b = bank.load()
    return [(f"follow-up: {f.question}", f.answer, f.key_points) for f in b.followups] + \
        [(f"spoken: {s.question}", s.answer, s.key_points) for s in b.spoken]


@pytest.mark.parametrize("where, answer, points", every_item(), ids=lambda x: x[:40] if isinstance(x, str) else "")
def test_every_model_answer_passes_its_own_key_point_check(where, answer, points):
    assert keypoints.found(points, answer, TOL) == [True] * len(points), where


@pytest.mark.parametrize("where, answer, points", every_item(), ids=lambda x: x[:40] if isinstance(x, str) else "")
def test_an_answer_that_says_nothing_finds_no_key_point(where, answer, points):
    assert keypoints.found(points, "I am not sure, I would look it up.", TOL) == [False] * len(points), where


def test_the_card_number_key_point_comes_from_the_card_example():
    ex = bank.load().card_example
    spoken = next(s for s in bank.load().spoken if any(p.number for p in s.key_points))
    p = next(p for p in spoken.key_points if p.number)
    assert p.number == pytest.approx(3000 / 70)           # the card's 3 TB/s over 70 GB, as plain arithmetic
    assert p.number == pytest.approx(ex.bw_gbs / ex.gb_per_token)
    assert "42.9" in p.point and "70B" in p.point
    assert p.found_in("about 43 tokens a second", TOL) and not p.found_in("about 4.3 tokens a second", TOL)


@pytest.mark.parametrize("text, picked", [("1 3", {1, 3}), ("1,3", {1, 3}), ("all", {1, 2, 3, 4}), ("none", set()),
                                          ("-", set())])
def test_checked_key_points_are_read(text, picked):
    assert keypoints.parse_checked(text, 4) == picked


@pytest.mark.parametrize("text", ["", "one", "0 2", "5", "1 x"])
def test_checked_key_points_that_cannot_be_read_are_refused_with_the_reason(text):
    with pytest.raises(ValueError, match="key point"):
        keypoints.parse_checked(text, 4)


class Collect(list):
    def __call__(self, line=""):
        self.append(line)


def test_a_follow_up_shows_the_points_found_and_the_self_mark_decides(tmp_path):
    b = bank.load()
    p = session.Plan(seed=1, drills=[], statements=[], followups=list(b.followups[:2]))
    first = b.followups[0]
    lines = [first.answer, "n", "I do not know", "y"]     # a full answer marked n; nothing said, marked y
    path = tmp_path / "a.txt"
    path.write_text("\n".join(lines) + "\n")
    out = Collect()
    score = session.run(b, p, answers.FileAnswers(path, write=out), out, offer=False)
    text = "\n".join(out)
    n1, n2 = len(first.key_points), len(b.followups[1].key_points)
    assert f"key points found in your answer: {n1} of {n1}" in text
    assert f"key points found in your answer: 0 of {n2}" in text
    assert f"1. [x] {first.key_points[0].point}" in text
    assert f"1. [ ] {b.followups[1].key_points[0].point}" in text
    assert text.index("key points found") < text.index("model answer:")
    assert score.followups == [False, True]
    assert "Part 1: follow-up questions" in text


def test_a_key_point_with_an_unknown_figure_or_no_way_to_find_it_is_refused():
    import copy

    import yaml
    data = yaml.safe_load(bank.PATH.read_text())
    for edit, message in [
        (lambda d: d["spoken"][0]["key_points"][0].update(point="about {nonsense} tokens"), "unknown figure"),
        (lambda d: d["followups"][0]["key_points"][0].pop("any"), "needs 'any'"),
        (lambda d: d["spoken"][0]["key_points"][0].update(number="pi"), "'pi' is not one of"),
        (lambda d: d["followups"][2].update(key_points=[]), "at least 2 key points"),
        (lambda d: d["spoken"][1].update(seconds=0), "spoken[1].seconds"),
        (lambda d: d.update(spoken_slack=2), "spoken_slack"),
    ]:
        changed = copy.deepcopy(data)
        edit(changed)
        with pytest.raises(bank.BankError, match="quiz.yml") as info:
            bank.parse(changed)
        assert message in str(info.value)


def _same_speed_point():
    (followup,) = [f for f in bank.load().followups if "twice the FLOP/s" in f.question]
    return followup.key_points[0]


@pytest.mark.parametrize("text", [
    "No: it is memory-bound, the extra FLOPs just wait on memory.",
    "No. Memory-bound.",
    "Nope, the bandwidth is the same.",
    "Not really: each step waits on the weights coming out of memory.",
    "It won't get any faster, the step waits on memory.",
    "It stays the same.",
])
def test_a_no_said_as_an_interviewer_would_hear_it_is_the_no_speed_up_point(text):
    assert _same_speed_point().found_in(text, TOL)


@pytest.mark.parametrize("text", [
    "Yes, about twice as fast.",
    "Now it runs twice the tokens per second.",
    "Yes: nothing holds it back, so it gets faster.",
    "Notably faster, twice the FLOPs.",
    "It gets faster, no question.",
])
def test_a_yes_is_not_the_no_speed_up_point(text):
    assert not _same_speed_point().found_in(text, TOL)


@pytest.mark.parametrize("way, text, found", [
    ("^no", "No, memory-bound", True), ("^no", "Now faster", False), ("^no", "It is no faster", False),
    ("no$+faster", "it is no faster", True), ("no$+faster", "nothing stops it, faster", False),
    ("no$+faster", "faster, no question", False), ("no$ faster", "faster, no question", True),
])
def test_a_first_word_and_a_whole_word_are_read_as_written(way, text, found):
    assert point(way).found_in(text, TOL) is found

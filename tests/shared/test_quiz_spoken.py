"""Spoken answers against the clock: the card's 20 s and 40 s answers, timing from an injected clock
(tests never wait), key points checked off, and the command line."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.quiz import answers, bank, cli, progress, spoken
from tests.helpers.paths import ROOT
from tests.shared.drills import Collect

LAWS = settings(derandomize=True, deadline=None, database=None, max_examples=200)


class Clock:
    """A clock that moves only when told: each call returns the next reading, in seconds."""

    def __init__(self, readings):
        self.readings = list(readings)

    def __call__(self):
        return self.readings.pop(0)


def readings(elapsed):
    """Clock readings for answers that take ``elapsed`` seconds each (one start, one stop per answer)."""
    out, now = [], 1000.0
    for e in elapsed:
        out += [now, now + e]
        now += e + 7
    return out


def run(tmp_path, items, lines, elapsed, kept=None):
    path = tmp_path / "spoken.txt"
    path.write_text("\n".join(lines) + "\n")
    out = Collect()
    result = spoken.run(bank.load(), spoken.SpokenPlan(seed=1, items=items), answers.FileAnswers(path, write=out),
                        out, clock=Clock(readings(elapsed)), progress=kept)
    return result, out.text


def test_the_card_s_question_is_asked_as_a_20_s_and_a_40_s_answer():
    b = bank.load()
    assert {s.seconds for s in b.spoken} == {20, 40}
    card = [s for s in b.spoken if "limited by memory bandwidth rather than by FLOPs" in s.question
            or "the same question, the full answer" in s.question]
    assert sorted(s.seconds for s in card) == [20, 40]
    full = next(s for s in card if s.seconds == 40)
    assert len(full.key_points) > len(next(s for s in card if s.seconds == 20).key_points)
    assert "42.9 tokens per second" in full.answer and "1,371" in full.answer   # from card_example, formatted


@LAWS
@given(st.floats(min_value=0, max_value=200), st.sampled_from([20, 40]), st.floats(min_value=0, max_value=0.9))
def test_in_time_means_within_the_target_and_its_grace(elapsed, target, slack):
    in_time, said = spoken.timing(elapsed, target, slack)
    assert in_time == (elapsed <= target * (1 + slack))
    assert f"{target} s" in said
    assert ("over" in said) == (elapsed > target)


def test_every_key_point_in_time_counts_and_over_time_or_a_missing_point_does_not(tmp_path):
    b = bank.load()
    twenty = next(s for s in b.spoken if s.seconds == 20)
    forty = next(s for s in b.spoken if s.seconds == 40)
    items = [twenty, twenty, forty, forty]
    lines = ["go", "stop", "-", "all",         # 18 s of 20: counted
             "go", "stop", "-", "all",         # 30 s of 20: over even with the grace
             "go", "stop", "-", "1 2",         # in time, points missing
             "go", "stop", "-", "all"]         # 45 s of 40: over, within the 25% grace
    result, text = run(tmp_path, items, lines, [18, 30, 35, 45])
    assert result.score.followups == [True, False, False, True]
    assert result.seconds == [18, 30, 35, 45]
    assert "18 s of your 20 s: in time" in text
    assert "30 s against 20 s: 10 s over; say less" in text
    assert "45 s against 40 s: 5 s over, within the grace" in text
    missing = ", ".join(str(n) for n in range(3, len(forty.key_points) + 1))
    assert f"not counted: key points {missing} missing; reread: {forty.reread}" in text
    assert f"not counted: over time; reread: {twenty.reread}" in text
    made = 2 * len(twenty.key_points) + 2 + len(forty.key_points)
    assert f"Spoken: 2/4 answers with every key point in time; key points made {made}/" in text


def test_words_typed_after_the_stop_are_checked_for_the_key_points(tmp_path):
    forty = next(s for s in bank.load().spoken if any(p.number for p in s.key_points))
    n = len(forty.key_points)
    typed = "one vector per layer; bandwidth over the weights' size gives about 43 tok/s"
    result, text = run(tmp_path, [forty], ["go", "stop", typed, "all"], [39])
    assert f"key points found in your answer: 3 of {n}" in text
    number_point = next(i for i, p in enumerate(forty.key_points, 1) if p.number)
    assert f"{number_point}. [x] {forty.key_points[number_point - 1].point}" in text
    assert result.score.followups == [True]


def test_the_clock_starts_after_the_start_line_and_stops_at_the_stop_line(tmp_path):
    """Two readings per answer, taken after each line: the reading between them is never used."""
    twenty = next(s for s in bank.load().spoken if s.seconds == 20)
    clock = Clock([5.0, 17.0])
    path = tmp_path / "a.txt"
    path.write_text("go\nstop\n-\nall\n")
    out = Collect()
    result = spoken.run(bank.load(), spoken.SpokenPlan(1, [twenty]), answers.FileAnswers(path, write=out), out,
                        clock=clock)
    assert result.seconds == [12.0] and clock.readings == []


class Typist(answers.FileAnswers):
    """Answers from a file, each line taking ``seconds[line]`` of a shared clock to give."""

    def __init__(self, path, seconds, write):
        super().__init__(path, write=write)
        self.now, self.seconds = 0.0, list(seconds)

    def clock(self):
        return self.now

    def get(self, ask):
        self.now += self.seconds.pop(0)
        return super().get(ask)


def test_the_clock_times_the_answer_not_the_typing_of_the_key_words(tmp_path):
    """Typing the key words comes after the clock stopped: a slow typist is not over time."""
    twenty = next(s for s in bank.load().spoken if s.seconds == 20)
    path = tmp_path / "a.txt"
    path.write_text("go\nstop\nbytes moved, two operations per weight, bandwidth\nall\n")
    out = Collect()
    source = Typist(path, [1.0, 18.0, 60.0, 2.0], write=out)
    result = spoken.run(bank.load(), spoken.SpokenPlan(1, [twenty]), source, out, clock=source.clock)
    assert result.seconds == [18.0]
    assert result.score.followups == [True] and "18 s of your 20 s: in time" in out.text


def test_results_go_into_progress_and_weak_sections_come_first(tmp_path):
    b = bank.load()
    kept = progress.Progress(tmp_path / "p.json")
    plain = spoken.plan(b, 4)
    assert [s.question for s in spoken.plan(b, 4, progress=kept).items] == [s.question for s in plain.items]
    last = plain.items[-1]
    for _ in range(3):
        kept.record(last.reread, False)
    first = spoken.plan(b, 4, progress=kept).items[0]
    assert first.reread == last.reread
    result, _ = run(tmp_path, [first], ["go", "stop", "-", "none"], [10], kept)
    assert kept.recent[first.reread] == [0, 0, 0, 0]


def test_rounds_limit_the_questions_and_the_seed_repeats_them():
    b = bank.load()
    assert len(spoken.plan(b, 9).items) == len(b.spoken)
    assert len(spoken.plan(b, 9, rounds=2).items) == 2
    assert spoken.plan(b, 9).items == spoken.plan(b, 9).items


def test_the_command_line_times_with_the_clock_it_is_given(tmp_path, capsys):
    b = bank.load()
    items = spoken.plan(b, 11, rounds=2).items
    path = tmp_path / "a.txt"
    path.write_text("go\nstop\n-\nall\ngo\nstop\n-\nnone\n")
    where = tmp_path / "progress.json"
    code = cli.main(["--spoken", "--seed", "11", "--rounds", "2", "--answers", str(path), "--progress", str(where)],
                    clock=Clock(readings([items[0].seconds - 1, 3])))
    out = capsys.readouterr().out
    assert code == 0
    assert f"{items[0].seconds - 1} s of your {items[0].seconds} s: in time" in out
    assert "Spoken: 1/2 answers with every key point in time" in out
    kept = progress.Progress.load(where)
    assert kept.sessions == 1 and kept.added == 0
    assert sum(len(v) for v in kept.recent.values()) == 2


def test_spoken_and_focus_together_are_one_clear_error(capsys):
    with pytest.raises(SystemExit) as info:
        cli.main(["--spoken", "--focus", "batching"])
    assert info.value.code == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--spoken" in err and "--focus" in err


def test_a_spoken_answers_file_that_does_not_fit_exits_2_naming_the_line(tmp_path, capsys):
    path = tmp_path / "a.txt"
    path.write_text("go\nstop\n-\nmost of them\n")
    code = cli.main(["--spoken", "--rounds", "1", "--answers", str(path), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"answers file {path} line 4 (spoken 1: key points you made" in err and len(err.splitlines()) == 1


def test_the_page_says_what_the_data_says_about_spoken_answers():
    page = (ROOT / "docs" / "quiz.md").read_text(encoding="utf-8")
    b = bank.load()
    assert f"up to {b.spoken_slack:.0%} over the target still counts" in " ".join(page.split())
    assert f"({len(b.spoken)} in all;" in page
    assert "Not drilled yet" not in page

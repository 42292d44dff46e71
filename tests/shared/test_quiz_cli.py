"""``python -m shared.quiz`` end to end from answers files, in child processes."""
import re
import subprocess
import sys

import pytest

from shared.quiz import bank, card, session, slips
from shared.quiz.drills import fmt
from tests.helpers.paths import ROOT

SEED, ROUNDS = 7, 6


def quiz(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "shared.quiz", *args], cwd=ROOT, input=stdin,
                          capture_output=True, text=True, timeout=60)


def right_answers(p):
    """Answers to plan ``p``: every number exactly right, every costly statement, y to follow-ups."""
    lines = [f"{d.answer:.6g}" for d in p.drills]
    lines.append(" ".join(str(i) for i, s in enumerate(p.statements, 1) if s.costs) or "none")
    for _ in p.followups:
        lines += ["my attempt", "y"]
    return lines


@pytest.fixture
def plan():
    return session.plan(bank.load(), SEED, ROUNDS)


def write(tmp_path, lines, name="answers.txt"):
    path = tmp_path / name
    path.write_text("# answers for a test\n" + "\n".join(lines) + "\n")
    return str(path)


def test_all_right_scores_full_marks_with_no_weak_spots(tmp_path, plan):
    run = quiz("--seed", str(SEED), "--rounds", str(ROUNDS), "--answers", write(tmp_path, right_answers(plan)))
    assert run.returncode == 0, run.stderr
    total = ROUNDS + card.STATEMENTS_SHOWN + card.FOLLOWUPS_ASKED
    assert f"Score: {total}/{total}" in run.stdout
    assert "Weak spots: none" in run.stdout


def test_a_wrong_number_is_marked_wrong_with_the_worked_answer_shown(tmp_path, plan):
    lines = right_answers(plan)
    first = plan.drills[0]
    lines[0] = f"{first.answer * 2:.6g}"
    run = quiz("--seed", str(SEED), "--answers", write(tmp_path, lines))
    assert run.returncode == 0, run.stderr
    out = " ".join(run.stdout.split())  # undo the line wrapping
    assert f"wrong (you said {fmt(first.answer * 2)} {first.unit}, 2x high): {first.worked}" in out
    assert out.count("wrong (you said") == 1
    total = ROUNDS + card.STATEMENTS_SHOWN + card.FOLLOWUPS_ASKED
    assert f"Score: {total - 1}/{total} (drills {ROUNDS - 1}/{ROUNDS}," in out
    assert f"Weak spots to reread in the lesson: - {first.reread} (1 miss)" in out


def test_an_answer_within_the_stated_tolerance_is_accepted(tmp_path, plan):
    lines = right_answers(plan)
    lines[1] = f"{plan.drills[1].answer * 1.04:.6g} {plan.drills[1].unit}"
    run = quiz("--seed", str(SEED), "--answers", write(tmp_path, lines))
    assert "within 5% of the worked answer" in run.stdout
    assert "wrong (you said" not in run.stdout
    assert "Weak spots: none" in run.stdout


def test_same_seed_and_answers_give_the_same_output_and_score(tmp_path, plan):
    lines = right_answers(plan)
    lines[2] = "1"
    lines[ROUNDS] = "none"           # miss every costly statement
    lines[-1] = "n"                  # and the last follow-up
    path = write(tmp_path, lines)
    first, second = quiz("--seed", str(SEED), "--answers", path), quiz("--seed", str(SEED), "--answers", path)
    assert first.returncode == second.returncode == 0
    assert first.stdout == second.stdout
    costly = sum(s.costs for s in plan.statements)
    total = ROUNDS + card.STATEMENTS_SHOWN + card.FOLLOWUPS_ASKED
    expected = total - 1 - costly - 1
    assert f"Score: {expected}/{total}" in first.stdout
    assert re.search(r"Weak spots to reread in the lesson:\n  - ", first.stdout)
    other = quiz("--seed", str(SEED + 1), "--answers",
                 write(tmp_path, right_answers(session.plan(bank.load(), SEED + 1, ROUNDS)), "b.txt"))
    assert other.stdout.splitlines()[3:6] != first.stdout.splitlines()[3:6]


@pytest.mark.parametrize("mutate,message", [
    (lambda lines: lines[:-1], "has 12 answers; this quiz asks for 13"),
    (lambda lines: ["seventeen"] + lines[1:], "line 2 (drill 1: a number in"),
    (lambda lines: lines[:ROUNDS] + ["9"] + lines[ROUNDS + 1:], "statements are numbered 1 to 6, got 9"),
    (lambda lines: lines[:-1] + ["maybe"], "expected y or n, got 'maybe'"),
])
def test_a_bad_answers_file_exits_2_with_one_line(tmp_path, plan, mutate, message):
    run = quiz("--seed", str(SEED), "--answers", write(tmp_path, mutate(right_answers(plan))))
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and message in run.stderr, run.stderr


@pytest.mark.parametrize("args,message", [
    (["--answers", "/no/such/file"], "answers file /no/such/file: cannot read it"),
    (["--rounds", "0"], "--rounds"),
    (["--seed", "x"], "--seed"),
])
def test_bad_arguments_exit_2_with_one_line(args, message):
    run = quiz(*args)
    assert run.returncode == 2
    assert len(run.stderr.strip().splitlines()) == 1 and message in run.stderr
    assert "Traceback" not in run.stderr


def test_the_terminal_asks_again_and_stops_cleanly_at_end_of_input(plan):
    answers = right_answers(plan)
    run = quiz("--seed", str(SEED), stdin="not a number\n" + "\n".join(answers[:3]) + "\n")
    assert run.returncode == 0, run.stderr
    assert "(expected a number such as 17, 1,371, 5.8k or 1.4e3; got 'not a number'; try again)" in run.stdout
    assert "(input ended: the quiz stops here)" in run.stdout
    assert "Score: 3/3 (drills 3/3, statements 0/0, follow-ups 0/0)" in run.stdout


def _one_line(text):
    return " ".join(text.split())


def test_a_slip_is_named_with_how_far_off_it_was(tmp_path, plan):
    lines = right_answers(plan)
    i, drill = next((i, d) for i, d in enumerate(plan.drills) if d.slips)
    slip = slips.distinct(drill.answer, drill.slips, bank.load().tolerance)[0]
    lines[i] = f"{slip.value:.6g}"
    run = quiz("--seed", str(SEED), "--answers", write(tmp_path, lines))
    assert run.returncode == 0, run.stderr
    out = _one_line(run.stdout)
    off = slips.off_by(float(f"{slip.value:.6g}"), drill.answer)
    assert f"wrong (you said {fmt(float(f'{slip.value:.6g}'))} {drill.unit}, {off}):" in out
    assert f"the classic slip: {slip.name}" in out
    assert f"Classic slips in your answers: - {slip.name}" in out


def test_a_wrong_number_off_every_slip_names_none(tmp_path, plan):
    lines = right_answers(plan)
    lines[0] = f"{plan.drills[0].answer * 3.3:.6g}"
    run = quiz("--seed", str(SEED), "--answers", write(tmp_path, lines))
    assert "3.3x high" in run.stdout
    assert "classic slip" not in run.stdout.lower()


def test_weak_spots_come_with_the_commands_that_re_drill_them(tmp_path, plan):
    lines = right_answers(plan)
    lines[0] = f"{plan.drills[0].answer * 2:.6g}"
    run = quiz("--seed", str(SEED), "--answers", write(tmp_path, lines))
    section = plan.drills[0].reread
    assert f'python -m shared.quiz --focus "{section}" --seed {SEED + 1}' in run.stdout
    everything_right = quiz("--seed", str(SEED), "--answers", write(tmp_path, right_answers(plan), "r.txt"))
    assert "--focus" not in everything_right.stdout


def test_focus_re_drills_one_section(tmp_path):
    questions = bank.load()
    section = "Every way around the wall: batching"
    focused = session.focus_plan(questions, 3, section)
    assert focused.drills and all(d.reread == section for d in focused.drills)
    assert focused.statements and all(s.reread == section for s in focused.statements)
    run = quiz("--focus", "batching", "--seed", "3", "--answers", write(tmp_path, right_answers(focused)))
    assert run.returncode == 0, run.stderr
    assert f'Re-drill of "{section}", seed 3' in run.stdout
    total = len(focused.drills) + len(focused.statements) + len(focused.followups)
    assert f"Score: {total}/{total} (drills {session.FOCUS_ROUNDS}/{session.FOCUS_ROUNDS}," in run.stdout


def test_focus_on_a_section_without_drills_asks_its_statements_only(tmp_path):
    shy = session.focus_plan(bank.load(), 1, "Break It: tiny buffers")
    assert not shy.drills and shy.statements
    run = quiz("--focus", "tiny buffers", "--seed", "1", "--answers", write(tmp_path, right_answers(shy), "s.txt"))
    assert run.returncode == 0, run.stderr
    assert "drills (" not in run.stdout and "Part 1: which of these" in run.stdout
    assert bool(shy.followups) == ("Part 2: follow-up questions" in run.stdout)
    assert "Part 3" not in run.stdout


@pytest.mark.parametrize("focus, message", [
    ("wall", "--focus 'wall' matches several sections; choose one of:"),
    ("nosuch", "--focus 'nosuch' is not a section of the lesson; choose one of:"),
])
def test_a_focus_that_names_no_single_section_exits_2_with_one_line(focus, message):
    run = quiz("--focus", focus)
    assert run.returncode == 2 and run.stdout == ""
    assert len(run.stderr.strip().splitlines()) == 1 and message in run.stderr


def test_the_terminal_offers_the_re_drill_and_runs_it(plan):
    answers = right_answers(plan)
    answers[0] = f"{plan.drills[0].answer * 2:.6g}"
    section = plan.drills[0].reread
    focused = session.focus_plan(bank.load(), SEED + 1, section)
    stdin = "\n".join(answers + ["y"] + right_answers(focused)) + "\n"
    run = quiz("--seed", str(SEED), stdin=stdin)
    assert run.returncode == 0, run.stderr
    assert f'Re-drill "{section}" now? (y/n)' in run.stdout
    assert f'Re-drill of "{section}", seed {SEED + 1}' in run.stdout
    assert run.stdout.count("Score: ") == 2 and "Weak spots: none this time." in run.stdout.split("Re-drill of")[1]
    declined = quiz("--seed", str(SEED), stdin="\n".join(answers + ["n"]) + "\n")
    assert "Re-drill of" not in declined.stdout and declined.stdout.count("Score: ") == 1

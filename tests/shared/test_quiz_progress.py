"""Progress kept between quiz sessions: the file, its weakness order, weak sections first in the next
session, and where the command line keeps it (the home folder on a terminal, never for a script)."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shared.quiz import bank, card, progress, session
from tests.helpers.paths import ROOT

LAWS = settings(derandomize=True, deadline=None, database=None, max_examples=100)
SECTIONS = bank.load().sections


@LAWS
@given(st.lists(st.tuples(st.sampled_from(SECTIONS), st.booleans()), max_size=80))
def test_a_saved_progress_loads_back_with_the_newest_results_and_the_weakness_rule(tmp_path_factory, results):
    path = tmp_path_factory.mktemp("p") / "progress.json"
    kept = progress.Progress(path)
    for section, right in results:
        kept.record(section, right)
    kept.sessions = 3
    kept.save()
    back = progress.Progress.load(path)
    assert back.sessions == 3 and back.added == 0
    for section in SECTIONS:
        newest = [int(r) for s, r in results if s == section][-progress.KEEP:]
        assert back.recent.get(section, []) == newest
        assert back.weakness(section) == pytest.approx((newest.count(0) + 1) / (len(newest) + 2))
    weakest = back.weakest(SECTIONS)
    assert set(weakest) == {s for s in SECTIONS if 0 in back.recent.get(s, [])}
    assert [back.weakness(s) for s in weakest] == sorted((back.weakness(s) for s in weakest), reverse=True)


def test_a_missing_file_is_an_empty_progress(tmp_path):
    kept = progress.Progress.load(tmp_path / "none-yet.json")
    assert kept.empty and kept.sessions == 0 and kept.weakness(SECTIONS[0]) == 0.5


@pytest.mark.parametrize("content, message", [
    ("{not json", "not JSON"),
    (json.dumps({"grades": [1, 2]}), "not a quiz progress file"),
    (json.dumps({"kind": progress.KIND, "version": 1, "sessions": 1, "sections": {"A": [1, 2]}}), "malformed"),
    (json.dumps({"kind": progress.KIND, "version": 9, "sessions": 1, "sections": {}}), "malformed"),
])
def test_a_file_that_is_not_progress_is_one_line_and_is_left_alone(tmp_path, content, message):
    path = tmp_path / "p.json"
    path.write_text(content)
    run = quiz("--progress", str(path), "--seed", "1", "--rounds", "1", stdin="")
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr.count("\n") == 1 and message in run.stderr and str(path) in run.stderr
    assert path.read_text() == content


def test_a_progress_path_that_cannot_be_written_is_one_line(tmp_path):
    folder = tmp_path / "a-folder"
    folder.mkdir()
    run = quiz("--progress", str(folder), "--seed", "1", "--rounds", "1", stdin="5\n")
    assert run.returncode == 2
    assert run.stderr.count("\n") == 1 and "cannot" in run.stderr and str(folder) in run.stderr


def missed(section, times=3):
    kept = progress.Progress(Path("unused"))
    for _ in range(times):
        kept.record(section, False)
    return kept


@pytest.mark.parametrize("section", ["Every way around the wall: mixture of experts",
                                     "Prefill is the opposite workload", "The KV cache is also bytes",
                                     "Every way around the wall: faster memory"])
def test_the_drills_of_a_weak_section_come_first(section):
    for seed in range(5):
        p = session.plan(bank.load(), seed, 3, missed(section))
        first = [d.reread for d in p.drills]
        assert first[0] == section, (seed, first)
        assert sorted(first, key=lambda s: s != section) == first      # none of it after another section's


def test_the_follow_ups_of_a_weak_section_come_first():
    section = "Every way around the wall: mixture of experts"
    for seed in range(5):
        p = session.plan(bank.load(), seed, 2, missed(section))
        assert p.followups[0].reread == section and len(p.followups) == card.FOLLOWUPS_ASKED


def test_without_results_the_plan_is_the_seed_s_own():
    empty = progress.Progress(Path("unused"))
    a, b = session.plan(bank.load(), 8, 6), session.plan(bank.load(), 8, 6, empty)
    assert [d.prompt for d in a.drills] == [d.prompt for d in b.drills] and a.followups == b.followups


def test_a_session_records_every_result_and_the_next_one_starts_with_its_misses(tmp_path):
    where = tmp_path / "progress.json"
    p = session.plan(bank.load(), 5, 4)
    wrong = p.drills[1]
    lines = [f"{d.answer * (3 if d is wrong else 1):.6g}" for d in p.drills]
    lines.append(" ".join(str(i) for i, s in enumerate(p.statements, 1) if s.costs))
    for _ in p.followups:
        lines += ["-", "y"]
    answers = tmp_path / "a.txt"
    answers.write_text("\n".join(lines) + "\n")
    run = quiz("--seed", "5", "--rounds", "4", "--answers", str(answers), "--progress", str(where))
    assert run.returncode == 0, run.stderr
    kept = progress.Progress.load(where)
    assert kept.sessions == 1
    assert sum(len(v) for v in kept.recent.values()) == 4 + card.STATEMENTS_SHOWN + card.FOLLOWUPS_ASKED
    assert kept.recent[wrong.reread].count(0) == 1
    assert f"Progress kept in {where} (1 session)." in run.stdout
    assert f"  - {wrong.reread}: 1 of the last" in run.stdout
    nxt = session.plan(bank.load(), 6, 4, kept)
    assert nxt.drills[0].reread == wrong.reread


def test_input_that_ends_early_still_keeps_what_was_answered(tmp_path):
    where = tmp_path / "progress.json"
    p = session.plan(bank.load(), 5, 4)
    run = quiz("--seed", "5", "--rounds", "4", "--progress", str(where), stdin=f"{p.drills[0].answer:.6g}\n")
    assert run.returncode == 0 and "input ended" in run.stdout
    assert progress.Progress.load(where).recent == {p.drills[0].reread: [1]}


def quiz(*args, stdin=None, home=None):
    env = dict(os.environ, HOME=str(home)) if home else None
    return subprocess.run([sys.executable, "-m", "shared.quiz", *args], cwd=ROOT, input=stdin, env=env,
                          capture_output=True, text=True, timeout=60)


def test_a_script_never_touches_the_home_folder(tmp_path):
    p = session.plan(bank.load(), 5, 1)
    answers = tmp_path / "a.txt"
    answers.write_text(f"{p.drills[0].answer:.6g}\nnone\n" + "-\ny\n" * len(p.followups))
    home = tmp_path / "home"
    home.mkdir()
    assert quiz("--seed", "5", "--rounds", "1", "--answers", str(answers), home=home).returncode == 0
    assert quiz("--seed", "5", "--rounds", "1", stdin=answers.read_text(), home=home).returncode == 0
    assert list(home.iterdir()) == []


def test_a_terminal_session_keeps_progress_in_the_home_folder(tmp_path):
    """Run on a real pseudo-terminal: the default is a dot-file in $HOME, and --no-progress keeps none."""
    import pty
    home = tmp_path / "home"
    home.mkdir()
    p = session.plan(bank.load(), 5, 1)
    typed = [f"{p.drills[0].answer:.6g}", "none"] + ["-", "y"] * len(p.followups) + ["n"]

    def on_a_terminal(*args):
        main, child = pty.openpty()
        proc = subprocess.Popen([sys.executable, "-m", "shared.quiz", "--seed", "5", "--rounds", "1", *args],
                                cwd=ROOT, stdin=child, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                env=dict(os.environ, HOME=str(home)))
        os.close(child)
        for line in typed:
            os.write(main, (line + "\n").encode())
        out, err = proc.communicate(timeout=60)
        os.close(main)
        return proc.returncode, out.decode(), err.decode()

    code, out, err = on_a_terminal("--no-progress")
    assert code == 0, err
    assert list(home.iterdir()) == []
    code, out, err = on_a_terminal()
    assert code == 0, err
    kept = progress.Progress.load(home / ".why17-quiz.json")
    assert kept.sessions == 1 and sum(len(v) for v in kept.recent.values()) > 0
    assert f"Progress kept in {home / '.why17-quiz.json'}" in out


def test_the_default_path_is_in_the_home_folder(monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path))
    assert progress.default_path() == tmp_path / ".why17-quiz.json"

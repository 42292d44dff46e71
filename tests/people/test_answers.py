"""The hand-graded questions of the real why17 notebook and a student's answers to them."""
from __future__ import annotations

from autograder.core import course
from autograder.people import answers
from tests.people import classes


def _asg():
    return course.load(classes.ROOT / "course.yml").assignment("why17")


def test_the_questions_are_the_release_notebooks_explain_it_back_cells():
    qs = answers.questions(_asg())
    assert [q.grade_id for q in qs] == [f"explain-it-back-{n}" for n in range(1, 6)]
    assert [q.number for q in qs] == [1, 2, 3, 4, 5]
    assert qs[4].text.startswith("**5. A classmate reports 150% of their ceiling.")
    assert all(answers.STUB not in q.text for q in qs)


def test_an_answer_is_the_cell_less_its_question_and_an_untouched_cell_is_no_answer():
    qs = answers.questions(_asg())
    nb = classes.answered({2: "The KV cache and launches take the rest."})
    assert answers.answer_in(nb, qs[1]) == answers.Answer("The KV cache and launches take the rest.")
    missing = answers.answer_in(nb, qs[0])
    assert missing.text == "" and "YOUR ANSWER HERE" in missing.missing


def test_a_cell_that_lost_its_metadata_is_found_by_its_question():
    qs = answers.questions(_asg())
    nb = classes.answered({3: "One weight read serves the batch."}, drop_metadata=True)
    assert answers.answer_in(nb, qs[2]).text == "One weight read serves the batch."
    nb["cells"] = [c for c in nb["cells"] if "Batching 64 users" not in "".join(c["source"])]
    assert answers.answer_in(nb, qs[2]).missing == "the answer cell is not in the notebook"


def test_answers_are_read_from_a_zip_one_folder_deep_as_the_grader_reads_it(tmp_path):
    asg = _asg()
    qs = answers.questions(asg)
    path = classes.hand_in_zip(tmp_path, "bob", classes.answered({1: "Bytes, not FLOPs."}))
    found = answers.answers_of(path, asg, qs)
    assert found["explain-it-back-1"].text == "Bytes, not FLOPs."
    (tmp_path / "empty").mkdir()
    assert answers.answers_of(tmp_path / "empty", asg, qs)["explain-it-back-1"].missing == \
        "no why17.ipynb in the submission"
    (tmp_path / "broken").mkdir()
    (tmp_path / "broken" / "why17.ipynb").write_text("{ not json")
    assert "not a readable notebook" in answers.answers_of(tmp_path / "broken", asg, qs)["explain-it-back-5"].missing

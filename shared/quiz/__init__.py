"""Interview self-check: ``python -m shared.quiz``.

- ``bank``: the interview card's statements and follow-ups, paraphrased, from shared/data/quiz.yml.
- ``drills``: numeric drills generated from the lesson's formulas with hardware and models drawn
  from shared.tables, each with its worked answer.
- ``card``: spotting the statements that would cost you the question; the follow-up questions.
- ``answers``: where answers come from: the terminal, or a file (for tests).
- ``session``: one quiz: questions in order, marking, score, weak spots to reread.
- ``cli``: the command line.
"""

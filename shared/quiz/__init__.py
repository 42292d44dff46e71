"""Interview self-check: ``python -m shared.quiz``.

- ``bank``: the interview card's statements and follow-ups, paraphrased, from shared/data/quiz.yml.
- ``drills``: numeric drills generated from the lesson's formulas with hardware and models drawn
  from shared.tables, each with its worked answer.
- ``slips``: the classic slips behind a wrong number (per-stream for total, bytes for GB, the
  factor 2 of K and V, bits for bytes, ...) and how far off an answer is ("16x low").
- ``card``: spotting the statements that would cost you the question; the follow-up questions.
- ``answers``: where answers come from: the terminal, or a file (for tests).
- ``session``: one quiz: questions in order, marking, score, weak spots to reread, and a short
  re-drill of them (``--focus SECTION``).
- ``cli``: the command line.
"""

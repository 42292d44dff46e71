"""Interview self-check: ``python -m shared.quiz``.

- ``bank``: the interview card's statements and follow-ups, paraphrased, from shared/data/quiz.yml.
- ``drill``: what one numeric drill is (question, answer and unit, worked answer, section to reread,
  slips), and the table rows drills draw from.
- ``drills``: numeric drills generated from the lesson's formulas with hardware and models drawn
  from shared.tables, each with its worked answer; the list of every kind of drill.
- ``card_drills``: numeric drills for the interview card's items (its worked numbers, work per byte,
  splitting across devices, serving economics, time per token, ...); docs/quiz.md maps each to the card.
- ``numbers``: reading a number as people type it (5.8k, 5,832, 5 832, 1.4e3, about 43, 3.35 TB/s).
- ``slips``: the classic slips behind a wrong number (per-stream for total, bytes for GB, GiB for GB,
  the factor 2 of K and V, bits for bytes, ...) and how far off an answer is ("16x low").
- ``card``: spotting the statements that would cost you the question; the follow-up questions.
- ``keypoints``: the key points of a free-text or spoken answer, and a word check of a typed answer.
- ``spoken``: answers said out loud against an injectable clock (20 s and 40 s), key points checked off.
- ``progress``: results kept between sessions (~/.why17-quiz.json or --progress PATH), weakest first.
- ``answers``: where answers come from: the terminal, or a file (for tests).
- ``session``: one quiz: questions in order, marking, score, weak spots to reread, and a short
  re-drill of them (``--focus SECTION``).
- ``cli``: the command line.
"""

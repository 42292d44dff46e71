"""``python -m shared.quiz``: the interview self-check (see shared/quiz/cli.py)."""
from shared.quiz.cli import main

raise SystemExit(main())

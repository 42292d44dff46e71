"""Where the checkout is, for tests in any folder of tests/ (they never count parents of their own file)."""
from __future__ import annotations

from pathlib import Path

#: The checkout's root: the folder holding course.yml, autograder/, shared/ and tests/.
ROOT = Path(__file__).resolve().parents[2]

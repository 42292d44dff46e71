"""Stand-ins a dependent file runs with when the student's own file is broken (autograder/grading/fallback.py)."""

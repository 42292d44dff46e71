"""The grading engine. Never shipped to students; ``python -m autograder`` is its command line."""

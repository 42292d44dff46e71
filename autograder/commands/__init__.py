"""One module per ``python -m autograder`` command."""

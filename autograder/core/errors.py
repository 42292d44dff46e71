"""Errors: UsageError (the command line turns it into one line and exit status 2, never a
traceback), GraderError (the grader failed, not the student) and the Student* errors (student code
gave no value)."""


class UsageError(Exception):
    """Bad usage or bad input: no such path, unknown assignment, unreadable zip, invalid config."""


class GraderError(Exception):
    """The grader itself failed, not the student's code (the reference solution does not import,
    say): never a score; grade-all leaves the student's export cells empty and exits non-zero."""


class GradingStopped(GraderError):
    """A sandbox of a grading that was stopped (another lane failed, or it was interrupted) was
    asked for a child: the consequence of the failure that stopped it, never its cause."""


class StudentError(Exception):
    """Student code did not return a value."""


class StudentRaised(StudentError):
    """Student code raised ``exc_type`` (a class name such as 'ValueError') with ``message``."""

    def __init__(self, exc_type: str, message: str):
        super().__init__(f"{exc_type}: {message}")
        self.exc_type = exc_type
        self.message = message


class StudentTimeout(StudentError):
    """Student code ran past the time limit of one call (seconds)."""


class StudentCrashed(StudentError):
    """The process running student code died (exit, signal, out of memory) or broke the protocol."""


class StudentMissing(StudentError):
    """The submission has no such file or function, or the file does not import."""

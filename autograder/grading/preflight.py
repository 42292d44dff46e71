"""Before anyone is graded: is the course itself fit to grade with? (``grade`` and ``grade-all`` alike)

``check(course, asg)`` looks once at what every grading depends on and raises UsageError (one line, exit 2,
nobody graded) at the first problem:

- the course file parses and validates, with its hardware profile (``sim_profile``) and ``late:``
  block: ``course.load`` has done that before this runs;
- the reference solution folder ``solutions/<folder>/`` beside the course file exists, and holds
  every module the tasks name, each readable and valid Python (compiled, not run: importing it
  costs a torch import, and a reference that compiles but fails to import is caught per student
  as a grader failure, never a score: autograder/grading/context.py);
- the grader package (course.yml's ``grader``) exports a Lesson whose every piece is there, it
  imports with all its check modules, course.yml's
  points per check name exactly its checks, and every task worth points has at least one check.

Without it a course file copied away from its ``solutions/`` graded every student to zero.
"""
from __future__ import annotations

from autograder.core import course
from autograder.core.errors import UsageError
from autograder.grading.grade import checks_for, load_checks


def modules_of(asg) -> list[str]:
    """The reference modules the tasks name ('bw', 'flops', ...), in course.yml order."""
    names: list[str] = []
    for task in asg.tasks:
        for function in task.functions:
            module = function.split(".", 1)[0]
            if module not in names:
                names.append(module)
    return names


def check(the_course: course.Course, asg: course.Assignment) -> None:
    """UsageError naming the course file and the first problem; None when ``asg`` of
    ``the_course`` is fit to grade with."""
    where = f"{the_course.path}: assignment {asg.name!r}"
    folder = asg.solutions_dir
    if not folder.is_dir():
        raise UsageError(f"{where}: no reference solution folder {folder} (every grading compares "
                         f"with it); nobody was graded")
    for module in modules_of(asg):
        path = folder / f"{module}.py"
        try:
            source = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            reason = getattr(exc, "strerror", None) or "not UTF-8 text"
            raise UsageError(f"{where}: the reference solution {path} cannot be read ({reason}); "
                             f"nobody was graded") from None
        try:
            compile(source, str(path), "exec")
        except SyntaxError as exc:
            raise UsageError(f"{where}: the reference solution {path} line {exc.lineno} is not valid "
                             f"Python ({exc.msg}); nobody was graded") from None
    try:
        checks = load_checks(asg)    # the Lesson checked first (autograder/core/lesson.py)
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}; nobody was graded") from None
    except Exception as exc:   # any import failure of the grader's checks is one line
        raise UsageError(f"{where}: the grader package {asg.grader!r} does not import "
                         f"({type(exc).__name__}: {exc}); nobody was graded") from None
    from autograder.core import points
    try:
        points.of_checks(asg, checks_for(asg))    # course.yml's points name exactly the checks
    except UsageError as exc:
        raise UsageError(f"{exc}; nobody was graded") from None
    covered = {c.task for c in checks.values()}
    for task in asg.tasks:
        if task.points > 0 and task.id not in covered:
            raise UsageError(f"{where}: task {task.id!r} is worth {task.points:g} points but the grader "
                             f"package {asg.grader!r} has no check for it; nobody was graded")

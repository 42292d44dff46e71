"""The code a release's stubs dictate, written out so that similarity can discount it.

A stub says, in its docstring, what the function returns (``Returns: bw_gbs * 1e9 / (params_read *
bytes_per_weight), in tokens/s``) and that a bad argument raises ValueError; it imports
``shared.validate`` to do that. Two students who each follow the stub write the same checks and the
same return line, and copydetect (names and strings replaced) sees the same tokens: that overlap is
the assignment's, not copying. ``text`` writes every such line in the ways a student writes it
(with or without the unit, with or without assigning the result), in every order of those ways that
one 25-character comparison window can span, after the stub's own ``def`` and docstring or after a
bare ``def``; compare.py drops each comparison window found in it from every submission.
"""
from __future__ import annotations

import ast
import itertools
import re

#: How a student checks one argument with the helper the stubs import ({p}: the argument).
CHECKS = ('{p} = validate.positive("{p}", {p})\n',
          '{p} = validate.positive("{p}", {p}, "unit")\n',
          'validate.positive("{p}", {p})\n')
#: Consecutive checks one comparison window can span (NOISE_T characters of filtered code; a check
#: filters to 12 characters or more).
SPAN = 3
#: The end of the docstring's Returns line that is a unit, not code: ", in tokens/s.", ", both in ...".
UNIT_TAIL = re.compile(r",\s+(?:both\s+|each\s+)?in\s.*$")


def returned(doc: str) -> str | None:
    """The expression the docstring's ``Returns:`` line gives, if it is Python; else None."""
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip() == "Returns:" and i + 1 < len(lines):
            expr = UNIT_TAIL.sub("", lines[i + 1].strip()).rstrip(".")
            try:
                ast.parse(expr, mode="eval")
            except SyntaxError:
                return None
            return expr
    return None


def _lines(params, choice) -> str:
    return "".join(CHECKS[c].format(p=p) for p, c in zip(params, choice))


def function_text(source: str, fn: ast.FunctionDef) -> str:
    """The lines ``fn``'s stub dictates, in every combination a comparison window can span."""
    params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
    doc = ast.get_docstring(fn) or ""
    expr = returned(doc)
    end = fn.body[0].end_lineno if doc else fn.lineno
    stub_head = "\n".join(source.splitlines()[fn.lineno - 1:end]) + "\n"
    bare_head = f"def {fn.name}({', '.join(params)}):\n"
    tail = f"return {expr}\n" if expr else ""
    head_n = min(len(params), SPAN - 1)
    parts = []
    for head in (stub_head, bare_head):
        parts.append(head + tail)
        for choice in itertools.product(range(len(CHECKS)), repeat=head_n):
            parts.append(head + _lines(params[:head_n], choice))
    for choice in itertools.product(range(len(CHECKS)), repeat=min(len(params), SPAN)):
        parts.append(_lines(params[:SPAN], choice))
        if tail:
            parts.append(_lines(params[-len(choice):], choice) + tail)
    return "".join(parts)


def filled(source: str, tree: ast.Module, check: str | None) -> str:
    """The stub module with each function's body (after its docstring) replaced by the checks, all
    written as ``check`` (none when None), and the return line its docstring gives: so that the
    windows that run from one function into the next are dictated too."""
    lines = source.splitlines()
    functions = [n for n in tree.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    for fn in sorted(functions, key=lambda n: n.lineno, reverse=True):
        doc = ast.get_docstring(fn)
        if not doc:
            continue
        params = [a.arg for a in fn.args.posonlyargs + fn.args.args + fn.args.kwonlyargs]
        body = [check.format(p=p).rstrip("\n") for p in params] if check else []
        expr = returned(doc)
        body += [f"return {expr}"] if expr else []
        lines[fn.body[0].end_lineno:fn.end_lineno] = ["    " + line for line in body]
    return "\n".join(lines) + "\n"


def text(source: str) -> str:
    """What the stub module ``source`` dictates (its functions', one after another, then the
    module filled in each way); "" when it does not parse or has no function."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return ""
    functions = [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if not functions:
        return ""
    return "".join([function_text(source, fn) for fn in functions]
                   + [filled(source, tree, check) for check in (*CHECKS, None)])

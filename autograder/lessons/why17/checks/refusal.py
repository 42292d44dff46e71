"""The argument checks' one question: does a call with a bad argument raise ValueError?"""
from __future__ import annotations

from autograder.api import CheckFailed, StudentRaised


def refuses(ctx, module: str, function: str, kwargs: dict, bad: str, why: str, reread: str) -> None:
    """Return when ``module``'s ``function(**kwargs)`` raises ValueError; else CheckFailed naming
    the bad argument as written (``bad``: "iters=0"), what such an argument is (``why``) and where
    the lesson says so (``reread``)."""
    try:
        value = ctx.call(module, function, **kwargs)
    except StudentRaised as exc:
        if exc.exc_type == "ValueError":
            return
        raise CheckFailed(f"{function} with {bad} raised {exc.exc_type} ({exc.message}); check the argument "
                          f"first and raise ValueError with a clear message naming it. {reread}") from None
    raise CheckFailed(f"{function} with {bad} returned {value!r} instead of raising ValueError: {why}. {reread}")

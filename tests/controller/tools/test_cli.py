"""The CLI's offline commands (no broker, no device): replay, check-config, verify, errors."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tablectl.controller.journal import Journal
from tablectl.controller.tools.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"
REPO = Path(__file__).resolve().parents[3]
ROUNDS = DATA / "replay" / "roulette-rounds.jsonl"
WHEEL = "devices[0] (id 'wheel', driver 'cammegh-ss2')"
"""How every error about the test config's wheel entry names it."""


def _config(tmp_path: Path, extra: str = "", rules: str = "min_revolutions = 4") -> Path:
    path = tmp_path / "table.toml"
    path.write_text(
        f"""
[table]
id = "ROU-T1"
game = "roulette"
[rules]
{rules}
[mqtt]
url = "mqtt://127.0.0.1:1"
[journal]
path = "{tmp_path / "j.sqlite"}"
[[devices]]
id = "wheel"
driver = "cammegh-ss2"
port = "socket://127.0.0.1:1"
{extra}
""",
        encoding="utf-8",
    )
    return path


def test_replay_prints_one_outcome_per_round(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["replay", "--config", str(_config(tmp_path)), str(DATA / "replay/roulette-rounds.jsonl")]
    )
    out, err = capsys.readouterr()
    outcomes = [json.loads(line) for line in out.splitlines()]
    assert code == 0, err
    assert [(o["round"], o["status"], o["reason"]) for o in outcomes] == [
        ("ROU-T1-000001", "settled", None),
        # seed-000 RL-I2: 3 revolutions < 4 → no spin
        ("ROU-T1-000002", "void", "min_revolutions"),
        ("ROU-T1-000003", "void", "same_direction"),
        # status-only wiring: no count, the wheel's own validation is trusted
        ("ROU-T1-000004", "settled", None),
        ("ROU-T1-000005", "void", "foreign_object"),
    ]
    first = outcomes[0]["result"]
    assert (first["number"], first["color"], first["revolutions"]) == (17, "black", 6)
    assert outcomes[3]["result"]["revolutions"] is None
    assert all(o["schema"] == 1 and o["game"] == "roulette" for o in outcomes)


def test_replay_min_revolutions_comes_from_config(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # seed-004 ROU 3.1.1 sets three rotations: the 3-revolution spin settles.
    config = _config(tmp_path, rules="min_revolutions = 3")
    assert (
        main(["replay", "--config", str(config), str(DATA / "replay/roulette-rounds.jsonl")]) == 0
    )
    statuses = [json.loads(line)["status"] for line in capsys.readouterr().out.splitlines()]
    assert statuses[1] == "settled"


def test_replay_reports_bad_lines_and_goes_on(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    events = tmp_path / "bad.jsonl"
    events.write_text(
        '{"type":"round_open"}\n'
        "not json\n"
        '{"type":"winning_number","number":"seventeen"}\n'
        '{"type":"bets_closed"}\n'
        '{"type":"winning_number","number":5}\n',
        encoding="utf-8",
    )
    code = main(["replay", "--config", str(_config(tmp_path)), str(events)])
    out, err = capsys.readouterr()
    assert code == 1
    assert "line 2: not JSON" in err
    assert "line 3: bad winning_number event: number" in err
    assert [json.loads(line)["result"]["number"] for line in out.splitlines()] == [5]


def test_check_config_accepts_the_shipped_examples(capsys: pytest.CaptureFixture[str]) -> None:
    for example in sorted((REPO / "config").glob("*.toml")):
        assert main(["check-config", str(example)]) == 0, example
    assert capsys.readouterr().out.count("OK") >= 2


@pytest.mark.parametrize(
    ("extra", "rules", "message"),
    [
        ("colour = 3", "", f"{WHEEL}: unknown key 'colour'"),
        ("silence_timeout = -1", "", f"{WHEEL}: silence_timeout"),
        ("", "min_revolutions = 0", "rules.min_revolutions"),
        ("", 'variant = "mini"', "rules.variant"),
        ("", "wheel = 1", "unknown key 'rules.wheel'"),
    ],
)
def test_check_config_names_the_bad_key_and_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], extra: str, rules: str, message: str
) -> None:
    config = _config(tmp_path, extra=extra, rules=rules)
    assert main(["check-config", str(config)]) == 78
    err = capsys.readouterr().err
    assert message in err
    assert str(config) in err
    assert err.count("\n") == 1


def test_check_config_unknown_driver(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = _config(tmp_path)
    config.write_text(config.read_text().replace("cammegh-ss2", "cammegh-ss9"))
    assert main(["check-config", str(config)]) == 78
    err = capsys.readouterr().err
    assert f"{config}: devices[0] (id 'wheel', driver 'cammegh-ss9'): unknown driver" in err


def test_check_config_missing_and_not_toml(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["check-config", str(tmp_path / "nope.toml")]) == 78
    assert "cannot read" in capsys.readouterr().err
    bad = tmp_path / "bad.toml"
    bad.write_text("[table\n")
    assert main(["check-config", str(bad)]) == 78
    assert "not valid TOML" in capsys.readouterr().err


def test_verify_names_the_first_broken_link(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "j.sqlite"
    with Journal(path, "ROU-T1") as journal:
        journal.append([{"type": "round_open", "ts": f"t{i}"} for i in range(5)])
    assert main(["verify", str(path)]) == 0
    assert "5 records" in capsys.readouterr().out
    with sqlite3.connect(path) as conn:
        body = conn.execute("SELECT body FROM records WHERE seq = 3").fetchone()[0]
        conn.execute("UPDATE records SET body = ? WHERE seq = 3", (body.replace("t2", "t9"),))
    assert main(["verify", str(path)]) == 1
    assert "seq 3" in capsys.readouterr().err

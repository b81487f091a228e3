"""``tablectl diag stats`` on card tables: shuffle randomness from journals the engines wrote.

The journals are written by the real pipeline: events go through
:meth:`tablectl.controller.service.runner.TableRunner.handle` into a real engine (so burn cards come
out face down, outcomes are the engine's), and the records end up in a
:class:`tablectl.controller.journal.store.Journal` in ``tmp_path``. Thirty 8-deck shoes are ~19 000
records; the runner's journal is a buffer that is then appended in one transaction (one fsync
instead of 38 000), except in the test that uses the journal itself end to end.
"""

from __future__ import annotations

import argparse
import io
import json
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core.events import (
    BetsClosed,
    Card,
    CutCard,
    RoundOpen,
    ShuffleCompleted,
    ShuffleStarted,
)
from tablectl.controller.engines import load_rules
from tablectl.controller.engines.cards import BaccaratEngine, CardEngine, DragonTigerEngine
from tablectl.controller.games.cards.shoe import full_shoe_codes
from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.journal import Committed, Journal
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.tools.diag.cli import add_arguments, run_async
from tablectl.controller.tools.diag.stats.shoes import Shoe, ShoeWindow, read_shoes
from tablectl.controller.tools.diag.stats.shuffle import (
    CARD_GAMES,
    SHORT_DECK_GAMES,
    result_model,
    shuffle_report,
)
from tablectl.drivers.cards import RANKS
from tablectl.drivers.clock import ManualClock
from tests.support.records import journaled

pytestmark = pytest.mark.timeout(60)

TABLE = "BAC-D1"
SHOE = full_shoe_codes(8)


@dataclass
class Result:
    rc: int
    out: str
    err: str

    def doc(self) -> dict[str, Any]:
        (line,) = [json.loads(line) for line in self.out.splitlines() if line.strip()]
        assert isinstance(line, dict)
        return line


async def diag(*argv: str) -> Result:
    parser = argparse.ArgumentParser(prog="tablectl diag")
    add_arguments(parser)
    args = parser.parse_args(list(argv))
    out, err = io.StringIO(), io.StringIO()
    rc = await run_async(args, out=out, err=err)
    return Result(rc, out.getvalue(), err.getvalue())


class BufferedJournal:
    """What :class:`TableRunner` needs of a journal, kept in memory (see the module docstring)."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    @property
    def last_seq(self) -> int:
        return len(self.records)

    def commit(
        self, records: Sequence[Mapping[str, Any]], *, after_seq: int | None = None
    ) -> Committed:
        assert after_seq in (None, self.last_seq)  # one writer: never a conflict
        stored = []
        for record in records:
            self.records.append(dict(record))
            stored.append(journaled(dict(record), seq=len(self.records)))
        return Committed(stored, [])  # no outbox here: nothing handed

    @property
    def acknowledged_seq(self) -> int:
        return self.last_seq  # nothing is published from memory: the state's outbox backlog is 0

    @property
    def newest_ts(self) -> str | None:
        return self.records[-1].get("ts") if self.records else None


def deal(runner: TableRunner, engine: CardEngine, order: Sequence[str], behind: int = 14) -> int:
    """Shuffle, burn, and deal coups from ``order`` until the engine ends the shoe (the cut
    card leaves ``behind`` cards); returns the cards dealt."""
    runner.committer.handle(ShuffleStarted())
    runner.committer.handle(ShuffleCompleted(cards=len(order)))
    pos = 0
    while engine.phase == "burn":
        runner.committer.handle(Card(card=order[pos]))
        pos += 1
    while engine.phase == "idle":
        runner.committer.handle(RoundOpen())
        runner.committer.handle(BetsClosed())
        while engine.phase == "dealing":
            if pos == len(order) - behind:
                runner.committer.handle(CutCard())
            runner.committer.handle(Card(card=order[pos]))
            pos += 1
    assert engine.phase == "shoe_end", engine.phase
    return pos


def play(
    path: Path,
    orders: Sequence[Sequence[str]],
    *,
    engine: CardEngine | None = None,
    table: str = TABLE,
) -> None:
    """Deal every shoe through the runner, then start the next shuffle (so the last shoe
    counts), and write the journal."""
    engine = engine if engine is not None else BaccaratEngine(table)
    buffer = BufferedJournal()
    runner = TableRunner(
        table_id=table,
        engine=engine,
        journal=buffer,  # type: ignore[arg-type]  # duck-typed: append and last_seq
        clock=ManualClock(1_800_000_000.0),
    )
    for order in orders:
        deal(runner, engine, order)
    runner.committer.handle(ShuffleStarted())
    with Journal(path, table) as journal:
        journal.append(buffer.records)


def shuffled(rng: random.Random, cards: Sequence[str] = SHOE) -> list[str]:
    order = list(cards)
    rng.shuffle(order)
    return order


def fair_shoes(count: int, seed: int) -> list[list[str]]:
    rng = random.Random(seed)
    return [shuffled(rng) for _ in range(count)]


def stacked_shoes(count: int, seed: int, prefix_length: int = 20) -> list[list[str]]:
    """Every shoe starts with the same ``prefix_length`` cards; the rest is shuffled."""
    rng = random.Random(seed)
    prefix = shuffled(rng)[:prefix_length]
    rest = list(SHOE)
    for card in prefix:
        rest.remove(card)
    return [prefix + shuffled(rng, rest) for _ in range(count)]


def write_config(tmp_path: Path, game: str = "baccarat", rules: str = "") -> Path:
    path = tmp_path / "table.toml"
    path.write_text(
        f"""[table]
id = "{TABLE}"
game = "{game}"
[rules]
{rules}
[journal]
path = "{tmp_path / "journal.sqlite"}"
[[devices]]
id = "shoe"
driver = "serial-shoe"
port = "/dev/null-shoe"
""",
        encoding="utf-8",
    )
    return path


# --- the verdicts --------------------------------------------------------------------------------


async def test_a_well_shuffled_series_is_not_flagged(tmp_path: Path) -> None:
    play(tmp_path / "journal.sqlite", fair_shoes(30, seed=7))
    config = write_config(tmp_path)
    doc = (await diag("stats", "--config", str(config), "--json")).doc()

    assert doc["kind"] == "shuffle"
    assert doc["game"] == "baccarat"
    assert doc["window"]["shoes"] == 30
    assert doc["window"]["in_progress_skipped"] == 0
    stats = doc["shuffle_stats"]
    assert stats["alpha"] == 0.05  # R5: 95 % confidence
    assert stats["supplementary_alpha"] == pytest.approx(0.05 / 8)
    assert stats["cards_per_shoe"]["min"] >= 400
    assert stats["rank_by_position"]["positions"] >= 400
    assert stats["rank_by_position"]["dof"] == 12 * stats["rank_by_position"]["positions"]
    assert stats["rank_by_position"]["p_value"] > 0.05
    assert stats["first_card"]["rank"]["n"] == 30
    assert stats["repetition"]["rate"] == pytest.approx(1 / 52, rel=0.01)
    results = stats["results"]
    assert results["model"] == "baccarat, 8-deck probabilities"
    assert {f["value"] for f in results["frequencies"]} == {"banker", "player", "tie"}
    assert results["n"] > 2000  # ~80 coups a shoe
    assert set(stats["tests"]) == {
        "rank_by_position",
        "rank_position_outliers",
        "suit_by_position",
        "suit_position_outliers",
        "first_card_rank",
        "first_card_suit",
        "serial_correlation",
        "repetition",
        "results",
    }
    assert not any(stats["tests"].values()), stats["tests"]
    assert stats["flagged"] is False

    text = await diag("stats", "--config", str(config))
    assert text.rc == 0, text.err
    assert "shuffle randomness, table BAC-D1 (baccarat)" in text.out
    assert "window: all dealt shoes: 30" in text.out
    assert "risk level 0.05 for R5's chi-square (rank by position)" in text.out
    assert "overall: no test flagged (9 tests)" in text.out


async def test_shoes_that_always_start_with_the_same_20_cards_are_flagged(
    tmp_path: Path,
) -> None:
    play(tmp_path / "journal.sqlite", stacked_shoes(30, seed=7))
    config = write_config(tmp_path)
    stats = (await diag("stats", "--config", str(config), "--json")).doc()["shuffle_stats"]

    rank = stats["rank_by_position"]
    assert rank["sum_flagged"] is True  # the R5 test itself
    assert rank["p_value"] < 1e-6
    outliers = [o["position"] for o in rank["outliers"]]
    assert outliers == list(range(1, 21))  # exactly the stacked positions, most extreme first
    assert all(o["count"] == 30 for o in rank["outliers"])
    assert stats["first_card"]["rank"]["flagged"] is True
    assert stats["repetition"]["flagged"] is True
    assert stats["repetition"]["matches"] >= 29 * 20
    assert stats["tests"]["serial_correlation"] is False  # the order inside is still random
    assert stats["flagged"] is True

    text = await diag("stats", "--config", str(config))
    assert "positions where one rank came up too often" in text.out
    assert "overall: FLAGGED (" in text.out
    assert "look at this shuffler" in text.out


async def test_a_shoe_never_shuffled_is_flagged_on_every_count(tmp_path: Path) -> None:
    play(tmp_path / "journal.sqlite", [list(SHOE)] * 10)  # new-deck order, again and again
    config = write_config(tmp_path)
    stats = (await diag("stats", "--config", str(config), "--json")).doc()["shuffle_stats"]

    assert stats["rank_by_position"]["sum_flagged"] is True
    assert stats["serial_correlation"]["r"] > 0.5  # A, 2, 3, … within each suit
    assert stats["serial_correlation"]["flagged"] is True
    assert stats["repetition"]["matches"] == stats["repetition"]["compared"]
    assert stats["results"]["flagged"] is True  # a stacked shoe deals stacked coups
    assert all(stats["tests"].values())


async def test_last_n_shoes_windows_out_an_old_bias(tmp_path: Path) -> None:
    play(tmp_path / "journal.sqlite", stacked_shoes(10, seed=3) + fair_shoes(30, seed=7))
    config = write_config(tmp_path)
    everything = (await diag("stats", "--config", str(config), "--json")).doc()
    recent = (await diag("stats", "--config", str(config), "--last", "30", "--json")).doc()

    assert everything["window"]["shoes"] == 40
    assert everything["shuffle_stats"]["flagged"] is True
    assert recent["window"]["shoes"] == 30
    assert recent["window"]["requested_last"] == 30
    assert recent["window"]["first"]["shuffle_seq"] > everything["window"]["first"]["shuffle_seq"]
    assert recent["shuffle_stats"]["flagged"] is False


async def test_dragon_tiger_ties_against_their_probability(tmp_path: Path) -> None:
    # Cards paired by rank (K K Q Q …): every coup a tie; the χ² and the tie's σ both catch it.
    rng = random.Random(5)
    by_rank = sorted(SHOE, key=lambda code: code[0])
    pairs = [by_rank[i : i + 2] for i in range(0, len(by_rank), 2)]  # two cards of one rank
    orders = []
    for _ in range(6):
        rng.shuffle(pairs)
        orders.append([card for pair in pairs for card in pair])
    engine = DragonTigerEngine(TABLE)
    play(tmp_path / "journal.sqlite", orders, engine=engine)
    config = write_config(tmp_path, "dragon_tiger")
    stats = (await diag("stats", "--config", str(config), "--json")).doc()["shuffle_stats"]

    results = stats["results"]
    assert results["model"] == "dragon_tiger, 8 decks"
    tie = next(f for f in results["frequencies"] if f["value"] == "tie")
    assert tie["expected"] / results["n"] == pytest.approx(31 / 415)  # (4d − 1)/(52d − 1)
    assert tie["count"] == results["n"]
    assert tie["flagged"] is True
    assert results["flagged"] is True
    assert stats["serial_correlation"]["flagged"] is True


# --- reading the journal -------------------------------------------------------------------------


async def test_a_journal_written_by_the_runner_counts_burns_and_skips_the_shoe_in_progress(
    tmp_path: Path,
) -> None:
    rng = random.Random(11)
    engine = BaccaratEngine(TABLE)
    path = tmp_path / "journal.sqlite"
    with Journal(path, TABLE) as journal:
        runner = TableRunner(
            table_id=TABLE, engine=engine, journal=journal, clock=ManualClock(1_800_000_000.0)
        )
        dealt = [deal(runner, engine, shuffled(rng)) for _ in range(2)]
        runner.committer.handle(ShuffleStarted())
        runner.committer.handle(ShuffleCompleted(cards=416))
        runner.committer.handle(Card(card="5H"))  # the third shoe's first (burn) card: in progress
        burn_face_down = sum(
            1 for r in journal.records() if r["type"] == "card" and r.get("face_down")
        )

    assert burn_face_down > 0  # burned cards are journaled face down, in full
    window = read_shoes(path)
    assert [len(s.cards) for s in window.shoes] == dealt
    assert window.in_progress == 1
    assert all(s.shuffler_count == 416 for s in window.shoes)
    assert sum(len(s.results) for s in window.shoes) > 100
    # --journal alone: the game comes from the journal's outcomes.
    result = await diag("stats", "--journal", str(path), "--json")
    assert result.rc == 0, result.err
    doc = result.doc()
    assert doc["game"] == "baccarat"
    assert doc["window"]["shoes"] == 2
    assert doc["window"]["in_progress_skipped"] == 1
    assert doc["shuffle_stats"]["rank_by_position"] is None  # fewer than 5 shoes
    assert any("at least 5" in note for note in doc["shuffle_stats"]["notes"])


async def test_cards_before_the_first_shuffle_have_no_position(tmp_path: Path) -> None:
    records: list[dict[str, Any]] = [
        {"type": "card", "ts": "2027-01-15T08:00:00Z", "card": "AS"},  # mid-shoe start
        {"type": "shuffle_completed", "ts": "2027-01-15T08:00:01Z", "cards": 416},
        {"type": "card", "ts": "2027-01-15T08:00:02Z", "card": "KH", "face_down": True},
        {"type": "card", "ts": "2027-01-15T08:00:03Z", "card": "ZZ"},  # no card: kept in place
        {"type": "card", "ts": "2027-01-15T08:00:04Z", "card": "JK"},
        {"type": "shuffle_started", "ts": "2027-01-15T08:00:05Z"},
        {"type": "shuffle_completed", "ts": "2027-01-15T08:00:06Z", "cards": 415},  # rejected
        {"type": "shoe_end", "ts": "2027-01-15T08:00:06Z", "cards_read": 0, "expected": 416},
        {"type": "shuffle_completed", "ts": "2027-01-15T08:00:07Z", "cards": 416},
        {"type": "card", "ts": "2027-01-15T08:00:08Z", "card": "2C"},
        {"type": "shoe_end", "ts": "2027-01-15T08:00:09Z", "cards_read": 1, "expected": 416},
    ]
    with Journal(tmp_path / "journal.sqlite", TABLE) as journal:
        journal.append(records)
    window = read_shoes(tmp_path / "journal.sqlite")

    assert [s.cards for s in window.shoes] == [("KH", "ZZ", "JK"), ("2C",)]
    assert (window.outside, window.empty, window.in_progress) == (1, 1, 0)
    assert [len(s.cards) for s in read_shoes(tmp_path / "journal.sqlite", last=1).shoes] == [1]
    report = shuffle_report(window)
    assert (report.unreadable, report.jokers, report.cards) == (1, 1, 4)


# --- flags and errors ----------------------------------------------------------------------------


async def test_roulette_flags_do_not_apply_to_a_card_table(tmp_path: Path) -> None:
    play(tmp_path / "journal.sqlite", fair_shoes(1, seed=1))
    config = write_config(tmp_path)

    variant = await diag("stats", "--config", str(config), "--variant", "american")
    assert variant.rc == 1
    assert "--variant is a roulette wheel's; this table plays baccarat" in variant.err
    device = await diag("stats", "--config", str(config), "--device", "shoe")
    assert device.rc == 1
    assert "whose shuffler keeps none" in device.err


async def test_a_game_without_statistics_is_a_one_line_error(tmp_path: Path) -> None:
    config = write_config(tmp_path, "crazy_time")
    result = await diag("stats", "--config", str(config))

    assert result.rc == 1
    assert result.err.startswith("tablectl diag stats: ")
    assert "analyses roulette wheels and card shoes" in result.err
    assert "'crazy_time'" in result.err


def test_card_games_are_the_catalogs_card_games_whose_decks_hold_every_rank() -> None:
    # Every game on the card engine shuffles a shoe or deck; the tests expect 13 ranks at 1/13.
    card_engine = {game for game, entry in CATALOG.items() if entry.family == "cards"}
    short = {game for game in card_engine if load_rules(game).rules.ranks != RANKS}
    assert SHORT_DECK_GAMES == short == {"bet21"}
    assert card_engine - short == CARD_GAMES
    assert {"baccarat", "dragon_tiger", "blackjack", "three_card_poker", "top_card"} <= CARD_GAMES


async def test_a_deck_shuffled_for_every_round_gets_shuffle_statistics(tmp_path: Path) -> None:
    rng = random.Random(3)
    deck = full_shoe_codes(1)
    records: list[dict[str, Any]] = []
    for _ in range(6):  # one deck a round, seven cards out of each (Three Card Poker)
        records += [
            {"type": "shuffle_started", "ts": "2027-01-15T08:00:00Z"},
            {"type": "shuffle_completed", "ts": "2027-01-15T08:00:01Z", "cards": 52},
        ]
        records += [
            {"type": "card", "ts": "2027-01-15T08:00:02Z", "card": c}
            for c in shuffled(rng, deck)[:7]
        ]
    records.append({"type": "shuffle_started", "ts": "2027-01-15T08:00:03Z"})
    with Journal(tmp_path / "journal.sqlite", TABLE) as journal:
        journal.append(records)
    result = await diag(
        "stats", "--config", str(write_config(tmp_path, "three_card_poker")), "--json"
    )

    assert result.rc == 0, result.err
    doc = result.doc()
    assert (doc["kind"], doc["game"], doc["window"]["shoes"]) == ("shuffle", "three_card_poker", 6)
    assert doc["shuffle_stats"]["rank_by_position"]["positions"] == 7
    assert doc["shuffle_stats"]["results"] is None  # no result model for this game


async def test_a_short_deck_game_is_refused_rather_than_always_flagged(tmp_path: Path) -> None:
    result = await diag("stats", "--config", str(write_config(tmp_path, "bet21")))

    assert result.rc == 1
    assert "'bet21' deals from a deck without every rank" in result.err


async def test_an_empty_card_journal_says_there_is_nothing_to_test(tmp_path: Path) -> None:
    with Journal(tmp_path / "journal.sqlite", TABLE) as journal:
        journal.append([{"type": "shuffle_started", "ts": "2027-01-15T08:00:00Z"}])
        journal.append([{"type": "shuffle_completed", "ts": "2027-01-15T08:00:01Z", "cards": 416}])
    result = await diag("stats", "--config", str(write_config(tmp_path)))

    assert result.rc == 0, result.err
    assert "skipped 1 shoe in progress" in result.out
    assert "no dealt shoe in the journal window: nothing to test" in result.out


# --- the maths on shoes, without a journal -------------------------------------------------------


def test_false_alarm_rate_of_a_fair_shuffler_is_about_two_alpha() -> None:
    # R5's test at α plus the Bonferroni family at α: a fair shuffler should flag about 2α of
    # windows (fewer with few shoes, where the sums are conservative), never much more.
    rng = random.Random(2024)
    deck = full_shoe_codes(1)
    windows = 200
    flagged = r5 = 0
    for _ in range(windows):
        shoes = tuple(Shoe(i, None, tuple(shuffled(rng, deck)[:40])) for i in range(20))
        report = shuffle_report(ShoeWindow(shoes))
        flagged += report.flagged
        r5 += report.tests["rank_by_position"]
    assert r5 / windows <= 0.09
    assert flagged / windows <= 0.16


def test_result_models() -> None:
    baccarat = result_model("baccarat", {})
    assert baccarat is not None
    assert dict(baccarat.probabilities) == pytest.approx(
        {"banker": 0.4586, "player": 0.4462, "tie": 0.0952}, abs=1e-4
    )
    war = result_model("dragon_tiger", {"variant": "war_of_bets"})
    assert war is not None
    assert war.label == "war_of_bets, 6 decks"
    assert war.probabilities["war"] == pytest.approx(23 / 311)
    # No config: the variant is the one whose names the journal's winners use.
    football = result_model("dragon_tiger", {}, ["home", "draw", "away"])
    assert football is not None
    assert set(football.probabilities) == {"home", "away", "draw"}
    assert result_model("blackjack", {}) is None

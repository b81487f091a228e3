"""``diag stats --by dealer`` against figures computed here, by plain Python, from the script.

Real parts: each table's rounds run through its real engine and the table runner into a real
SQLite journal (roulette and baccarat; staff on, a refused mid-round change, a break, manual
readings, deal errors, misdeals, a supervisor's void); the archive path reads the same records
from a real PostgreSQL, stored and verified as the archiver does (tests/integration/
test_archive_use.py). The expected figures never call the code under test: duty, pace, rates,
χ² and p-values are computed from the script with the definitions of docs/station.md.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import json
import math
import random
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from tablectl.controller.core import events as ev
from tablectl.controller.engines import build_engine
from tablectl.controller.journal import Journal, JournalRecord
from tablectl.controller.service.runner import TableRunner
from tablectl.controller.tools.diag.cli import add_arguments, run_async
from tablectl.drivers.clock import ManualClock

# The european wheel clockwise from 0 and the 8-deck baccarat probabilities, written out here
# (not imported) so the expectation does not come from the code under test.
WHEEL = [0, 32, 15, 19, 4, 21, 2, 25, 17, 34, 6, 27, 13, 36, 11, 30, 8, 23, 10]
WHEEL += [5, 24, 16, 33, 1, 20, 14, 31, 9, 22, 18, 29, 7, 28, 12, 35, 3, 26]
BACCARAT = {"banker": 0.458597, "player": 0.446247, "tie": 0.095156}
SECTOR = 6  # 37 pockets: six sectors of 6 and one of 1 → 6 dof, a closed-form p-value
ALPHA_WHEEL, ALPHA_CARDS = 0.025, 0.05

# Player, banker, player, banker: naturals, so the winner is the cards' (no third card).
COUPS = {
    "player": ("9{}", "2{}", "K{}", "3{}"),
    "banker": ("2{}", "9{}", "3{}", "K{}"),
    "tie": ("8{}", "8{}", "K{}", "Q{}"),
}
SUITS = "SHDC"


def at(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Script:
    """One table's script: the events, and (kept beside them, in plain terms) what it means."""

    table: str
    game: str
    events: list[list[ev.TableEvent]] = field(default_factory=list)
    steps: list[tuple[str, Any, datetime]] = field(default_factory=list)
    """("on", person, t) ("off", person, t) ("round", (result, void_reason), t)
    ("manual", None, t) ("deal_error", None, t); a refused change is not a step."""
    rounds: int = 0
    dealt: Counter[str] = field(default_factory=Counter)

    def on(self, person: str, t: datetime, name: str | None = None, **more: Any) -> None:
        self.events.append(
            [ev.StaffOn(ts=iso(t), person=person, role="dealer", how="badge", name=name, **more)]
        )
        self.steps.append(("on", person, t))

    def off(self, person: str, t: datetime, reason: str) -> None:
        event = ev.StaffOff(ts=iso(t), person=person, role="dealer", how="badge", reason=reason)
        self.events.append([event])
        self.steps.append(("off", person, t))

    def next_round(self) -> str:
        self.rounds += 1
        return f"{self.table}-{self.rounds:06d}"

    def spin(
        self, number: int, t: datetime, *, manual: bool = False, refused: str | None = None
    ) -> None:
        self.next_round()
        batch: list[ev.TableEvent] = [ev.RoundOpen(ts=iso(t))]
        if refused is not None:  # a dealer change in the round, unsigned: refused, no step
            who = ev.StaffOn(ts=iso(t), person=refused, role="dealer", how="badge")
            batch.append(who)
        batch.append(ev.BetsClosed(ts=iso(t + timedelta(seconds=10))))
        end = t + timedelta(seconds=20)
        batch.append(ev.WinningNumber(ts=iso(end), number=number, manual=manual))
        self.events.append(batch)
        if manual:
            self.steps.append(("manual", None, end))
        self.steps.append(("round", (number, None), end))

    def void(self, t: datetime, reason: str, *, deal_error: bool = False) -> None:
        round_id = self.next_round()
        batch: list[ev.TableEvent] = [ev.RoundOpen(ts=iso(t)), ev.BetsClosed(ts=iso(t))]
        if self.game == "baccarat":
            batch.append(ev.Card(ts=iso(t), card="5S", device="shoe"))
        if deal_error:
            batch.append(ev.DealError(ts=iso(t), kind="card_exposed", manual=True))
            self.steps.append(("deal_error", None, t))
        end = t + timedelta(seconds=15)
        batch.append(ev.Void(ts=iso(end), reason=reason, round=round_id, manual=True))
        self.events.append(batch)
        self.steps.append(("round", (None, reason), end))

    def coup(self, winner: str, t: datetime, *, manual: bool = False) -> None:
        self.next_round()
        cards = []
        for rank in COUPS[winner]:  # the least used suit: 8 decks hold 8 of each card
            card = min((rank.format(x) for x in SUITS), key=lambda c: self.dealt[c])
            self.dealt[card] += 1
            cards.append(card)
        end = t + timedelta(seconds=30)
        batch: list[ev.TableEvent] = [ev.RoundOpen(ts=iso(t)), ev.BetsClosed(ts=iso(t))]
        batch += [
            ev.Card(ts=iso(end), card=c, device="shoe", manual=manual and i == 1)
            for i, c in enumerate(cards)
        ]
        self.events.append(batch)
        if manual:
            self.steps.append(("manual", None, end))
        self.steps.append(("round", (winner, None), end))


def roulette_script() -> Script:
    """D-1 deals 185 uniform spins (5 of each number) at one every 40 s, with three keyed in, a
    supervisor's void and a dealer change refused mid-round; D-2 then deals 185 + 40 spins whose
    extra 40 land in the first sector (a signature), one every 30 s, and signs off."""
    s = Script("ROU-1", "roulette")
    t = at("2026-11-30T08:00:00Z")
    s.on("D-1", t, name="Ana Ruiz")
    numbers = list(range(37)) * 5
    random.Random(7).shuffle(numbers)
    for i, number in enumerate(numbers):
        t += timedelta(seconds=40)
        s.spin(number, t, manual=i in (3, 50, 100), refused="D-2" if i == 20 else None)
        if i == 90:
            t += timedelta(seconds=40)
            s.void(t, "foreign_object")
    t += timedelta(seconds=60)
    s.on("D-2", t, name="Ben Okafor")
    biased = list(range(37)) * 5 + [WHEEL[i % SECTOR] for i in range(40)]
    random.Random(8).shuffle(biased)
    for number in biased:
        t += timedelta(seconds=30)
        s.spin(number, t)
    s.off("D-2", t + timedelta(seconds=45), "end_of_shift")
    return s


def baccarat_script() -> Script:
    """D-3 deals 14 coups (one card keyed in, a misdeal after a deal error); D-1 takes over,
    deals 10 (two keyed in, a misdeal), goes on a break, comes back for 4 more and is still on
    duty when the journal ends."""
    s = Script("BAC-1", "baccarat")
    t = at("2026-11-30T14:00:00Z")
    s.on("D-3", t, name="Carla Maas")
    t += timedelta(seconds=5)
    burn = ("3D", "KS", "7H", "2C")  # a 3 shown, three burned
    s.events.append([ev.ShuffleStarted(ts=iso(t)), ev.ShuffleCompleted(ts=iso(t), cards=416)])
    s.events.append([ev.Card(ts=iso(t), card=c, device="shoe") for c in burn])
    plan = [
        (
            "D-3",
            "banker player banker tie player banker banker player player banker tie banker"
            " player banker",
            {4},
            {7},
        ),
        ("D-1", "player banker banker player tie banker player player banker banker", {1, 6}, {3}),
    ]
    for dealer, winners, manual, misdeal in plan:
        if dealer != "D-3":
            t += timedelta(seconds=50)
            s.on(dealer, t, name="Ana Ruiz")
        for i, winner in enumerate(winners.split()):
            t += timedelta(seconds=70)
            if i in misdeal:
                s.void(t, "misdeal", deal_error=dealer == "D-3")
                t += timedelta(seconds=70)
            s.coup(winner, t, manual=i in manual)
    t += timedelta(seconds=60)
    s.off("D-1", t, "break")
    t += timedelta(minutes=15)
    s.on("D-1", t)
    for winner in ("banker", "tie", "player", "banker"):
        t += timedelta(seconds=65)
        s.coup(winner, t)
    return s


def journal(path: Path, script: Script) -> list[JournalRecord]:
    with Journal(path, script.table) as book:
        runner = TableRunner(
            table_id=script.table,
            engine=build_engine(script.table, script.game, {}, source="test"),
            journal=book,
            clock=ManualClock(1_764_496_800.0),
        )
        for batch in script.events:
            runner.committer.handle_batch(batch)
        return list(book.records())


# -- the expected figures, by plain Python from the script --------------------------------------


@dataclass
class Expected:
    n: Counter[str] = field(default_factory=Counter)
    """rounds, voids, misdeals, manual, deal_errors"""
    duty: float = 0.0
    tables: set[str] = field(default_factory=set)
    results: Counter[Any] = field(default_factory=Counter)


def expected(*scripts: Script) -> dict[str, Expected]:
    """Who was on duty at each step; a stint from its sign-on to the sign-off or the next
    dealer's sign-on, or (still open at the end) to its last round."""
    figures: dict[str, Expected] = {}
    for script in scripts:
        dealer: str | None = None
        start = last = None
        for kind, what, t in script.steps:
            if kind in ("on", "off") and dealer is not None and start is not None:
                figures[dealer].duty += (t - start).total_seconds()
                dealer = None
            if kind == "on":
                dealer, start, last = what, t, None
                figures.setdefault(what, Expected())
                continue
            if kind == "off" or dealer is None:
                continue
            mine = figures[dealer]
            if kind == "round":
                result, void = what
                mine.tables.add(script.table)
                mine.n["rounds"] += 1
                mine.n["voids"] += void is not None
                mine.n["misdeals"] += void == "misdeal"
                if result is not None:
                    mine.results[result] += 1
                last = t
            elif kind == "manual":
                mine.n["manual"] += 1
            elif kind == "deal_error":
                mine.n["deal_errors"] += 1
        if dealer is not None and start is not None:
            figures[dealer].duty += ((last or start) - start).total_seconds()
    return figures


def chi_square(counts: dict[Any, int], probabilities: dict[Any, float]) -> float:
    n = sum(counts.get(k, 0) for k in probabilities)
    return sum((counts.get(k, 0) - n * p) ** 2 / (n * p) for k, p in probabilities.items())


def chi2_sf_even(x: float, dof: int) -> float:
    """P(χ² ≥ x) for an even dof: the Poisson sum e^(-x/2) Σ (x/2)^k / k!, k < dof/2."""
    half = x / 2
    return math.exp(-half) * sum(half**k / math.factorial(k) for k in range(dof // 2))


# -- running the command ------------------------------------------------------------------------


async def by_dealer(*argv: str) -> tuple[int, str, str]:
    parser = argparse.ArgumentParser(prog="tablectl diag")
    add_arguments(parser)
    args = parser.parse_args(["stats", "--by", "dealer", *argv])
    out, err = io.StringIO(), io.StringIO()
    code = await run_async(args, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def journals(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    folder = tmp_path_factory.mktemp("dealers")
    scripts = {"ROU-1": roulette_script(), "BAC-1": baccarat_script()}
    records = {t: journal(folder / f"{t}.sqlite", s) for t, s in scripts.items()}
    return {"folder": folder, "scripts": scripts, "records": records}


def check(doc: dict[str, Any], figures: dict[str, Expected]) -> None:
    """Every dealer's figures in ``doc`` are the independent ones."""
    dealers = {d["dealer"]: d for d in doc["dealers"]}
    assert set(dealers) == set(figures)  # nobody off duty dealt a round: no "None" row
    for person, want in figures.items():
        got = dealers[person]
        assert got["tables"] == sorted(want.tables)
        assert (got["rounds"], got["voids"], got["misdeals"]) == (
            want.n["rounds"],
            want.n["voids"],
            want.n["misdeals"],
        ), person
        assert (got["manual"], got["deal_errors"]) == (want.n["manual"], want.n["deal_errors"]), (
            person
        )
        assert got["on_duty_seconds"] == pytest.approx(want.duty)
        assert got["pace_per_hour"] == pytest.approx(want.n["rounds"] * 3600 / want.duty)
        for what in ("voids", "misdeals", "manual", "deal_errors"):
            assert got["per_100"][what] == pytest.approx(100 * want.n[what] / want.n["rounds"])


async def test_each_dealers_rounds_pace_and_rates_from_a_roulette_journal(
    journals: dict[str, Any],
) -> None:
    script = journals["scripts"]["ROU-1"]
    code, out, err = await by_dealer(
        "--journal", str(journals["folder"] / "ROU-1.sqlite"), "--sector", str(SECTOR), "--json"
    )
    assert code == 0, err
    doc = json.loads(out)
    figures = expected(script)
    assert (figures["D-1"].n["rounds"], figures["D-2"].n["rounds"]) == (
        186,
        225,
    )  # the script's own
    assert (figures["D-1"].n["manual"], figures["D-1"].n["voids"]) == (3, 1)
    check(doc, figures)
    dealers = {d["dealer"]: d for d in doc["dealers"]}
    assert dealers["D-1"]["name"] == "Ana Ruiz"
    # The refused change left D-1 on duty: D-1's stint is sign-on to D-2's sign-on.
    first, change = script.steps[0][2], next(t for k, p, t in script.steps if p == "D-2")
    assert dealers["D-1"]["on_duty_seconds"] == (change - first).total_seconds()

    for person, flagged in (("D-1", False), ("D-2", True)):
        [game] = dealers[person]["games"]
        counts = figures[person].results
        n = sum(counts.values())
        # Numbers: uniform over 37 at α / 2 (two dealers played the wheel).
        numbers = game["numbers"]
        chi = chi_square(dict(counts), dict.fromkeys(range(37), 1 / 37))
        assert numbers["n"] == n
        assert numbers["chi_square"] == pytest.approx(chi)
        assert numbers["p_value"] == pytest.approx(chi2_sf_even(chi, 36), rel=1e-6)
        assert game["alpha"] == pytest.approx(ALPHA_WHEEL / 2)
        # Sectors of 6 in wheel order (the last is 26 alone): the dealer's signature.
        cut = [WHEEL[i : i + SECTOR] for i in range(0, 37, SECTOR)]
        by_sector = {i: sum(counts[p] for p in sector) for i, sector in enumerate(cut)}
        shares = {i: len(sector) / 37 for i, sector in enumerate(cut)}
        chi = chi_square(by_sector, shares)
        p_value = chi2_sf_even(chi, SECTOR)
        sectors = game["sectors"]
        assert [f["count"] for f in sectors["frequencies"]] == list(by_sector.values())
        assert sectors["chi_square"] == pytest.approx(chi)
        assert sectors["p_value"] == pytest.approx(p_value, rel=1e-6, abs=1e-12)
        assert sectors["flagged"] is flagged is (p_value < ALPHA_WHEEL / 2)
        assert sectors["verdict"] == ("flagged" if flagged else "ok")  # 5 expected: judged
    assert any("wheel sectors" in f for f in dealers["D-2"]["flags"])
    assert dealers["D-1"]["flagged"] is False


async def test_a_baccarat_journal_counts_misdeals_deal_errors_and_a_break(
    journals: dict[str, Any],
) -> None:
    script = journals["scripts"]["BAC-1"]
    code, out, err = await by_dealer(
        "--journal", str(journals["folder"] / "BAC-1.sqlite"), "--json"
    )
    assert code == 0, err
    figures = expected(script)
    assert (figures["D-3"].n["misdeals"], figures["D-3"].n["deal_errors"]) == (1, 1)
    assert (figures["D-1"].n["rounds"], figures["D-1"].n["manual"]) == (15, 2)
    doc = json.loads(out)
    check(doc, figures)
    for dealer in doc["dealers"]:
        [game] = dealer["games"]
        counts = figures[dealer["dealer"]].results
        n = sum(counts.values())
        results = game["results"]
        assert {f["value"]: f["count"] for f in results["frequencies"]} == {
            k: counts[k] for k in BACCARAT
        }
        chi = chi_square(dict(counts), BACCARAT)
        assert results["chi_square"] == pytest.approx(chi)
        assert results["p_value"] == pytest.approx(math.exp(-chi / 2))  # 2 dof
        # The small-sample guard: a tie expects 5 from 53 rounds on.
        assert results["needed"] == max(0, math.ceil(5 / BACCARAT["tie"]) - n)
        assert results["verdict"] == "too_few"
        assert game["alpha"] == pytest.approx(ALPHA_CARDS / 2)


async def test_the_text_report_and_its_svg(journals: dict[str, Any], tmp_path: Path) -> None:
    svg = tmp_path / "dealers.svg"
    path = journals["folder"] / "ROU-1.sqlite"
    code, out, err = await by_dealer("--journal", str(path), "--svg", str(svg))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0] == f"rounds by dealer, journal {path}"
    figures = expected(journals["scripts"]["ROU-1"])
    row = next(line.split() for line in lines if line.startswith("D-1 "))
    assert row[:4] == ["D-1", "Ana", "Ruiz", str(figures["D-1"].n["rounds"])]
    assert row[5] == f"{figures['D-1'].n['rounds'] * 3600 / figures['D-1'].duty:.1f}"
    assert any(line.startswith("FLAGGED D-2: ") and "wheel sectors" in line for line in lines)
    assert "rounds per hour on duty, by dealer" in out
    text = svg.read_text(encoding="utf-8")
    assert text.count('<g class="chart"') == 3  # the pace, then each dealer's sectors
    assert 'data-title="D-2: spins per sector of 5 neighbouring pockets"' in text


async def test_by_dealer_refuses_what_it_cannot_mean(journals: dict[str, Any]) -> None:
    path = str(journals["folder"] / "ROU-1.sqlite")
    code, _, err = await by_dealer("--journal", path, "--last", "10")
    assert code != 0
    assert "--by dealer reads every round of the window: not with --last" in err


@pytest.mark.slow
async def test_the_archive_gives_the_journals_figures_across_tables(
    journals: dict[str, Any], postgres_dsn: str
) -> None:
    """Stored and verified as the archiver does; per table the same document as the journal's,
    and across both tables D-1's rounds, duty and rates added up."""
    import psycopg  # noqa: PLC0415 - only with a server

    from tablectl.controller.archive.schema import migrate  # noqa: PLC0415
    from tests.integration.test_archive_use import _store, _verify  # noqa: PLC0415

    with psycopg.connect(postgres_dsn) as conn:
        migrate(conn)
    for records in journals["records"].values():
        await asyncio.to_thread(_store, postgres_dsn, records)
    await asyncio.to_thread(_verify, postgres_dsn)

    for table in ("ROU-1", "BAC-1"):
        path = str(journals["folder"] / f"{table}.sqlite")
        code, out, err = await by_dealer("--journal", path, "--json")
        assert code == 0, err
        from_journal = json.loads(out)
        code, out, err = await by_dealer("--dsn", postgres_dsn, "--table", table, "--json")
        assert code == 0, err
        from_archive = json.loads(out)
        assert from_archive.pop("source").startswith("archive ")
        from_journal.pop("source")
        assert from_archive == from_journal
        assert "authorship unverified" in err

    code, out, err = await by_dealer("--dsn", postgres_dsn, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["tables"] == ["BAC-1", "ROU-1"]
    check(doc, expected(*journals["scripts"].values()))
    [ana] = [d for d in doc["dealers"] if d["dealer"] == "D-1"]
    assert ana["tables"] == ["BAC-1", "ROU-1"]
    assert [g["game"] for g in ana["games"]] == ["baccarat", "roulette"]

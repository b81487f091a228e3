"""The engine-error lane: an engine that raises holds the round, loses no event, and survives
kill -9 (issue 25, defect 3).

No game shipped with tablectl raises on a well-formed event (that is the point of the engines),
so the defect is planted where an operator would meet one: in a game from another package,
through the project's own extension point. ``tests/fault/plugin/tablectl-fault-games`` is an
installable package (pip installs it into a folder of its own, put on the controller's
``PYTHONPATH``) with a ``tablectl.games`` entry point, ``fault_high_card``: High Card whose rank
table lacks the queen, so the round that deals a queen raises ``KeyError`` inside the card engine.
Nothing of tablectl is patched: the table runs the real runner, journal, MQTT and replay.

Each lane is a card table of that game: ``tablectl simulate shoe`` on a pty dealing a scripted
shoe one card per request (the lane is the dealer: it knows every card the shoe put out), betting
opened and closed by the lane as a game server would (``[betting] mode = "external"``,
``cmd/event``), ``tablectl run`` restarted the way systemd would. Each episode: a round or two,
then a round that deals a queen — the injection — and then:

* an ``engine_error`` fault (device ``engine``) journaled just before the card the engine raised
  on, the card journaled all the same, the fault on ``alarms``, the retained state locked;
* held: the cards dealt meanwhile and a ``round_open`` are journaled, nothing is applied (no
  outcome);
* kill -9 while held (every other episode, twice): the start says the fault is still latched
  (``power_on``), replay holds where play held, and the cards dealt after the restart are
  journaled, not applied;
* a supervisor's void for another round is refused ``wrong_round``; the void naming the round
  in play voids it (or the restart's own ``controller_restart`` void did); ``cmd/clear_fault``
  ``engine``/``engine_error`` releases the table, and play resumes (a settled round).

After every injection the lane's invariants (:func:`check_lane`: nothing lost, nothing divergent,
every outcome published once per seq) and every card the shoe dealt in the journal, in order.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.controller.journal.retention import verify_chain
from tablectl.drivers.cards import full_deck
from tests.fault.conftest import scaled
from tests.fault.harness import (
    PREFIX,
    Collector,
    FaultReport,
    Lane,
    alive,
    check_journal,
    check_lane,
    power_ons,
    read_journal,
    records,
    wait_power_on,
)
from tests.support.mosquitto import MosquittoProcess
from tests.support.processes import REPO, log_tail, write_config

pytestmark = [pytest.mark.fault, pytest.mark.broker, pytest.mark.timeout(240)]

ENGINE_LANES = 2
EPISODES_PER_LANE = 4

PLUGIN = Path(__file__).resolve().parent / "plugin" / "tablectl-fault-games"
GAME = "fault_high_card"
SUPERVISOR = "FM-0042"
_PIP_INSTALL = (sys.executable, "-m", "pip", "install", "--quiet", "--no-deps")


@pytest.fixture(scope="module")
def plugin_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin package installed with pip into a folder of its own (built from a copy, so
    the source tree gets no build folders)."""
    work = tmp_path_factory.mktemp("fault-games")
    source = work / "src"
    shutil.copytree(PLUGIN, source)
    site = work / "site"
    subprocess.run(
        [*_PIP_INSTALL, "--target", str(site), str(source)],
        check=True,
        timeout=240,
        cwd=work,
    )
    assert (site / "tablectl_fault_games" / "game.py").is_file()
    return site


def _shoe(rng: random.Random, episodes: int) -> tuple[list[str], list[int]]:
    """The scripted shoe: 8 decks without their queens, shuffled, and one queen put in each
    episode's faulty round. Returns the cards and the queens' positions (0-based)."""
    plain = [card.code for card in full_deck() if card.code[0] != "Q"] * 8
    rng.shuffle(plain)
    cards: list[str] = []
    queens: list[int] = []
    for _ in range(episodes):
        # Per episode: 2 rounds of 2 cards, the faulty round's two cards, up to 4 dealt while
        # held (2 before and 2 after a restart), 2 rounds after the release.
        before = [plain.pop() for _ in range(4)]
        faulty = [rng.choice("SHDC"), plain.pop()]
        queen = f"Q{faulty[0]}"
        faulty[0] = queen
        if rng.random() < 0.5:
            faulty.reverse()
        cards += before
        queens.append(len(cards) + faulty.index(queen))
        cards += faulty
        cards += [plain.pop() for _ in range(4 + 4)]
    cards += [plain.pop() for _ in range(20)]
    return cards, queens


class ShoeLane(Lane):
    """A card table of the planted game: the shoe simulator dealing on request, the lane as its
    dealer and as the game server that opens and closes betting."""

    def __init__(
        self, name: str, workdir: Path, broker: MosquittoProcess, site: Path, cards: list[str]
    ) -> None:
        super().__init__(name, workdir, broker.url, env={"PYTHONPATH": str(site)})
        self.broker = broker
        self.cards = cards
        self.dealt = 0
        self.commands = 0

    def start_sim(self, extra: Any = ()) -> None:
        args = ["--pty", "--link", str(self.link), "--rate", "0", "--cards", ",".join(self.cards)]
        with self.sim_log.open("ab") as err:
            proc = subprocess.Popen(
                [sys.executable, "-m", "tablectl", "simulate", "shoe", *args],
                stdout=subprocess.PIPE,
                stdin=subprocess.PIPE,
                stderr=err,
                cwd=REPO,
            )
        assert proc.stdout is not None
        line = proc.stdout.readline()
        if not line.startswith(b"READY "):
            proc.kill()
            raise AssertionError(f"shoe not ready: {line!r}\n{log_tail(self.sim_log)}")
        self.sim = proc

    def write_config(self, port: str | None = None) -> Path:
        path = write_config(
            self.workdir / "table.toml",
            table=self.table,
            port=port or str(self.link),
            mqtt_url=self.broker_url,
            journal=self.journal,
            journal_options="checkpoint_every = 7",
        )
        # The roulette table of write_config, made the planted card game's: its shoe, its rules,
        # betting from the lane (a game server's cmd/event).
        text = path.read_text(encoding="utf-8")
        text = text.replace('game = "roulette"', f'game = "{GAME}"', 1)
        text = text.replace("[rules]\n", '[rules]\ndecks = 8\n\n[betting]\nmode = "external"\n', 1)
        text = text.replace('driver = "cammegh-ss2"', 'driver = "serial-shoe"', 1)
        path.write_text(text, encoding="utf-8")
        return path

    # -- the dealer --------------------------------------------------------------------------

    async def deal(self, collector: Collector) -> str:
        """Pull one card from the shoe; wait until the journal has it. Returns the card."""
        assert self.sim is not None
        assert self.sim.stdin is not None
        card = self.cards[self.dealt]
        self.dealt += 1
        self.sim.stdin.write(b"1\n")
        self.sim.stdin.flush()
        await _until(
            lambda: len(self.journaled_cards()) >= self.dealt, 15, f"{card} journaled", self
        )
        return card

    def journaled_cards(self) -> list[str]:
        return [r["card"] for r in records(read_journal(self.journal)) if r["type"] == "card"]

    async def command(
        self, collector: Collector, verb: str, body: dict[str, Any]
    ) -> dict[str, Any]:
        """Send ``cmd/{verb}`` (a lab table: unsigned) and return its reply."""
        self.commands += 1
        request = {"id": f"{self.table}-{self.commands}", **body}
        mark = len(collector.other[self.table])
        async with aiomqtt.Client(self.broker.host, self.broker.port) as client:
            await client.publish(f"{PREFIX}/{self.table}/cmd/{verb}", json.dumps(request), qos=1)

        def reply() -> dict[str, Any] | None:
            for topic, data in collector.other[self.table][mark:]:
                if topic == f"cmd/{verb}/reply":
                    answer: dict[str, Any] = json.loads(data)
                    if answer.get("id") == request["id"]:
                        return answer
            return None

        await collector.wait(lambda: reply() is not None, 15, f"{self.table}: cmd/{verb} reply")
        answer = reply()
        assert answer is not None
        return answer

    async def event(self, collector: Collector, kind: str, **fields: Any) -> dict[str, Any]:
        answer = await self.command(collector, "event", {"event": {"type": kind, **fields}})
        assert answer.get("ok") is True, (kind, answer)
        return answer

    async def play_round(self, collector: Collector, report: FaultReport) -> None:
        """A whole round: betting opened and closed, two cards, a settled outcome."""
        await self.event(collector, "round_open")
        await self.event(collector, "bets_closed")
        await self.deal(collector)
        await self.deal(collector)
        outcome = await _until(
            lambda: _last_of(self, "outcome", after=self.last_card_seq()), 15, "an outcome", self
        )
        assert outcome["status"] == "settled", outcome
        report.check("a round of the planted game settles (before the fault, after its clear)")

    def last_card_seq(self) -> int:
        found = records(read_journal(self.journal))
        return max(int(r["seq"]) for r in found if r["type"] == "card")


async def _until(probe: Any, timeout: float, what: str, lane: Lane) -> Any:  # noqa: ASYNC109
    deadline = time.monotonic() + timeout
    while not (found := probe()):
        if lane.ctl is not None and lane.ctl.poll() is not None:
            raise AssertionError(f"{lane.table}: controller exited waiting for {what}")
        if time.monotonic() > deadline:
            raise AssertionError(f"{lane.table}: {what}: not within {timeout}s\n{lane.log_tail()}")
        await asyncio.sleep(0.03)
    return found


def _last_of(lane: Lane, kind: str, *, after: int = 0) -> dict[str, Any] | None:
    found = [r for r in records(read_journal(lane.journal)) if r["type"] == kind]
    return found[-1] if found and found[-1]["seq"] > after else None


def _check_cards(lane: ShoeLane, report: FaultReport) -> None:
    """Every card the shoe dealt is in the journal, in the order dealt, once."""
    journaled = lane.journaled_cards()
    assert journaled == lane.cards[: lane.dealt], (
        f"{lane.table}: dealt {lane.cards[: lane.dealt][-8:]}, journaled {journaled[-8:]}"
    )
    report.check("every card the shoe dealt is journaled, in order")


def _state(lane: Lane, collector: Collector) -> dict[str, Any]:
    views = [json.loads(d) for t, d in collector.other[lane.table] if t == "state"]
    return views[-1] if views else {}


async def _started(lane: Lane, collector: Collector, before: int) -> dict[str, Any]:
    """The controller's ``power_on``, once it is published: the outbox runs only after the
    command topics are subscribed, so a command sent now is heard."""
    await wait_power_on(lane, before)
    power_on = _last_of(lane, "power_on")
    assert power_on is not None
    await collector.wait(
        lambda: power_on["seq"] in collector.seqs(lane.table), 20, f"{lane.table}: online"
    )
    return power_on


def _held(state: dict[str, Any]) -> bool:
    return "engine_error" in state.get("devices", {}).get("engine", {}).get("faults", [])


async def _restart_held(
    lane: ShoeLane, collector: Collector, report: FaultReport, rng: random.Random
) -> None:
    """kill -9 while held, start again: the hold survives (replay holds where play held)."""
    before = power_ons(lane)
    await asyncio.sleep(rng.uniform(0.0, 0.3))
    lane.kill_ctl(signal.SIGKILL)
    report.inject("kill -9 while an engine error holds the round")
    lane.start_ctl()
    power_on = await _started(lane, collector, before)
    assert power_on["latched"].get("engine") == ["engine_error"], power_on
    report.check("power_on after kill -9 says engine_error still latched")
    alive(lane, report)
    await check_lane(lane, collector, report)
    await lane.deal(collector)  # journaled, not applied; a state follows every batch

    def held_since_start() -> bool:
        states = [json.loads(d) for t, d in collector.other[lane.table] if t == "state"]
        return any(s.get("seq", 0) > power_on["seq"] and _held(s) for s in states)

    await collector.wait(held_since_start, 10, f"{lane.table}: state held after the restart")
    report.check("the hold survives the restart (retained state: engine engine_error)")


async def _raise(lane: ShoeLane, collector: Collector, report: FaultReport) -> tuple[str, int]:
    """The round that deals a queen: the engine raises. Returns the round and the fault's seq."""
    table = lane.table
    await lane.event(collector, "round_open")
    await lane.event(collector, "bets_closed")
    status = await lane.command(collector, "status", {})
    in_play = status["state"]["round"]
    assert in_play, status
    opened = _last_of(lane, "round_open")
    assert opened is not None
    alarms_mark = len(collector.other[table])
    await lane.deal(collector)
    await lane.deal(collector)  # the second card ends the round: the engine raises
    report.inject("engine raises on a round (planted KeyError: a queen)")

    found = list(records(read_journal(lane.journal)))
    faults = [
        r
        for r in found
        if r["seq"] > opened["seq"] and r["type"] == "fault" and r.get("device") == "engine"
    ]
    assert len(faults) == 1, f"{table}: engine faults after seq {opened['seq']}: {faults}"
    fault = faults[0]
    assert fault["code"] == "engine_error", fault
    assert "KeyError" in fault["detail"], fault
    following = next(r for r in found if r["seq"] == fault["seq"] + 1)
    assert following["type"] == "card", (fault, following)
    report.check("engine_error fault journaled just before the card the engine raised on")
    assert not [r for r in found if r["seq"] > opened["seq"] and r["type"] == "outcome"]
    await collector.wait(
        lambda: any(
            t == "alarms" and json.loads(d).get("seq") == fault["seq"]
            for t, d in collector.other[table][alarms_mark:]
        ),
        10,
        f"{table}: the engine_error fault on alarms",
    )
    report.check("engine_error on alarms")
    await collector.wait(
        lambda: _held(_state(lane, collector)) and _state(lane, collector).get("locked") is True,
        10,
        f"{table}: state locked by engine_error",
    )
    report.check("retained state locked: engine engine_error")
    alive(lane, report)
    await check_lane(lane, collector, report)
    _check_cards(lane, report)
    return in_play, fault["seq"]


async def _release(
    lane: ShoeLane, collector: Collector, report: FaultReport, in_play: str, fault: int
) -> None:
    """The supervisor: a void must name the round in play; then the fault is cleared."""
    table = lane.table
    refused = await lane.command(
        collector, "void", {"reason": "engine_error", "round": f"{table}-999999", "by": SUPERVISOR}
    )
    assert (refused.get("ok"), refused.get("code")) == (False, "wrong_round"), refused
    report.check("a void naming another round is refused wrong_round")

    def ended() -> list[dict[str, Any]]:
        return [
            r
            for r in records(read_journal(lane.journal))
            if r["type"] == "outcome" and r.get("round") == in_play
        ]

    if not ended():
        voided = await lane.command(
            collector, "void", {"reason": "engine_error", "round": in_play, "by": SUPERVISOR}
        )
        assert voided.get("ok") is True, voided
        report.check("the supervisor's void (with its round) voids the held round")
    else:
        report.observe("held rounds voided controller_restart at the restart")
    assert [(r["status"], r["round"]) for r in ended()] == [("void", in_play)], ended()
    cleared = await lane.command(
        collector, "clear_fault", {"device": "engine", "code": "engine_error", "by": SUPERVISOR}
    )
    assert cleared.get("ok") is True, cleared
    assert _last_of(lane, "fault_cleared", after=fault) is not None
    await collector.wait(lambda: not _held(_state(lane, collector)), 10, f"{table}: state released")
    report.check("clear_fault engine/engine_error releases the table")


async def _episode(
    lane: ShoeLane,
    collector: Collector,
    report: FaultReport,
    queen: int,
    kills: int,
    rng: random.Random,
) -> None:
    table = lane.table
    while lane.dealt + 2 <= queen:  # the rounds before the faulty one (no queen in them)
        await lane.play_round(collector, report)
    in_play, fault = await _raise(lane, collector, report)

    # Held: what happens is journaled, nothing is applied.
    await lane.deal(collector)
    await lane.event(collector, "round_open")
    for _ in range(kills):
        await _restart_held(lane, collector, report, rng)
        _check_cards(lane, report)
    found = list(records(read_journal(lane.journal)))
    assert not [r for r in found if r["seq"] > fault and r["type"] == "outcome"], (
        f"{table}: an outcome while held"
    )
    report.check("held: cards and commands journaled, nothing applied (no outcome)")

    await _release(lane, collector, report, in_play, fault)
    await lane.play_round(collector, report)  # play resumes
    await check_lane(lane, collector, report)
    _check_cards(lane, report)


async def _engine_lane(
    lane: ShoeLane, collector: Collector, report: FaultReport, queens: list[int], seed: int
) -> None:
    rng = random.Random(seed)
    await asyncio.to_thread(lane.start_sim)
    lane.start_ctl()
    await _started(lane, collector, 0)
    await lane.event(collector, "shuffle_started")
    await lane.event(collector, "shuffle_completed", cards=416)
    for index, queen in enumerate(queens):
        await _episode(lane, collector, report, queen, 2 if index % 2 else 0, rng)
    await check_lane(lane, collector, report)
    await lane.stop_ctl()
    rows = read_journal(lane.journal)
    check_journal(rows, report)
    _check_cards(lane, report)
    (chain,) = verify_chain([lane.journal])
    assert (chain.first_seq, chain.last_seq) == (1, len(rows)), chain
    report.check("tablectl's own verifier accepts the journal")
    found = list(records(rows))
    report.observe(
        "events journaled while an engine error held the table",
        _held_events(found),
    )


def _held_events(found: list[dict[str, Any]]) -> int:
    held, count = False, 0
    for record in found:
        if record["type"] == "fault" and record.get("code") == "engine_error":
            held = True
        elif record["type"] == "fault_cleared" and record.get("code") == "engine_error":
            held = False
        elif held and record["type"] in ("card", "round_open"):
            count += 1
    return count


@contextlib.contextmanager
def _stopping(lanes: list[ShoeLane]) -> Iterator[None]:
    try:
        yield
    finally:
        for lane in lanes:
            lane.stop()


async def test_engine_errors(
    tmp_path: Path,
    mosquitto: MosquittoProcess,
    collector: Collector,
    fault_report: FaultReport,
    plugin_site: Path,
) -> None:
    started = time.monotonic()
    episodes = scaled(EPISODES_PER_LANE)
    lanes: list[ShoeLane] = []
    queens: list[list[int]] = []
    for i in range(ENGINE_LANES):
        cards, where = _shoe(random.Random(1400 + i), episodes)
        lanes.append(ShoeLane(f"E{i}", tmp_path / f"e{i}", mosquitto, plugin_site, cards))
        queens.append(where)
    with _stopping(lanes):
        async with asyncio.TaskGroup() as group:
            for i, lane in enumerate(lanes):
                group.create_task(_engine_lane(lane, collector, fault_report, queens[i], 1500 + i))
    fault_report.seconds["engine error"] = time.monotonic() - started

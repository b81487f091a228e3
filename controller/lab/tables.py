"""Simulated tables for the demo and the end-to-end tests: real drivers, simulated devices over
the transports a bench uses. Nothing in the controller is replaced."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tablectl.controller.config import TableConfig, parse_config
from tablectl.controller.core.events import ShuffleCompleted, ShuffleStarted
from tablectl.controller.engines.cards import load_game
from tablectl.controller.games.cards.deal import BaseGame
from tablectl.controller.lab.dealer import DealerPace, SimulatedDealer, SimulatedPresenter
from tablectl.controller.service.app import TableApp
from tablectl.drivers.cards import RANKS, SUITS, SYMBOLS
from tablectl.drivers.drum.driver import DrumDriver
from tablectl.drivers.errors import DriverError
from tablectl.drivers.shoe.barcodes import SYMBOL_DECKS, BarcodeCodec
from tablectl.drivers.shuffler.driver import ShufflerDriver
from tablectl.drivers.transports.can import CanLink
from tablectl.simulators.bigwheel import SimBigWheel
from tablectl.simulators.drum import FaultSpec as DrumFault
from tablectl.simulators.drum import SimDrum, run_sim_drum
from tablectl.simulators.serve import serve_tcp
from tablectl.simulators.shoe import SIM_PID, SIM_VID, SimShoe, make_usb_device, push_lines
from tablectl.simulators.shuffler import SimShuffler
from tablectl.simulators.ss2 import FaultSpec, SimSS2
from tablectl.simulators.usb_backend import SimUsbBackend
from tablectl.simulators.usb_device import SimUsbDevice

(SYMBOL_DECK,) = SYMBOL_DECKS  # the one symbol deck a lab shoe deals (Rock, Paper, Scissors)


async def serve_sim(group: asyncio.TaskGroup, model: Any, name: str) -> int:
    """Serves a simulated serial device on a free local TCP port; returns the port."""
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    group.create_task(serve_tcp(model, "127.0.0.1", 0, on_ready=ready.set_result), name=name)
    return int((await ready).rsplit(":", 1)[-1])


def socket_device(device_id: str, driver: str, port: int, **settings: Any) -> dict[str, Any]:
    return {"id": device_id, "driver": driver, "port": f"socket://127.0.0.1:{port}", **settings}


def lab_config(
    table_id: str,
    game: str,
    journal: Path,
    devices: list[dict[str, Any]],
    *,
    rules: dict[str, Any] | None = None,
    external_betting: bool = False,
    mqtt_url: str = "embedded",
    prefix: str = "tablectl",
) -> TableConfig:
    """A lab table's config. Its dealer, game server and RNG send unsigned commands: a lab
    switch, loud in check-config."""
    raw: dict[str, Any] = {
        "table": {"id": table_id, "game": game},
        "mqtt": {"url": mqtt_url, "topic_prefix": prefix},
        "journal": {"path": str(journal)},
        "security": {"insecure_commands": True},
        "devices": devices,
    }
    if rules is not None:
        raw["rules"] = rules
    if external_betting:
        raw["betting"] = {"mode": "external"}
    return parse_config(raw, f"<{table_id}>")


async def start_roulette_table(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    table_id: str = "ROU-DEMO",
    speed: float = 4.0,
    seed: int = 7,
    faults: Sequence[str] = (),
) -> TableConfig:
    """A simulated SS2 wheel on a local TCP port, and the roulette table's config."""
    model = SimSS2(seed=seed, speed=speed, faults=[FaultSpec.from_spec(f) for f in faults])
    port = await serve_sim(group, model, f"sim:{table_id}:wheel")
    return lab_config(
        table_id,
        "roulette",
        journal,
        [socket_device("wheel", "cammegh-ss2", port, sensor_stream=True)],
        rules={"variant": "european", "min_revolutions": 4},
    )


@dataclass
class CardTableSim:
    """A card table's simulated devices and how to drive them."""

    config: TableConfig
    shoe: SimShoe
    usb_backend: SimUsbBackend
    driver_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)

    seed: int = 0

    def new_shoe(self) -> None:
        """Load the next simulated shoe (a freshly shuffled one, as from the shuffler)."""
        self.seed += 1
        self.shoe = SimShoe(seed=self.seed, decks=self.shoe.decks, rate=0)

    async def serve_shoe(self, device: SimUsbDevice) -> None:
        """Type whatever the current shoe deals into the HID device, until cancelled."""
        while True:
            push_lines(device, self.shoe.advance(time.monotonic()))
            await asyncio.sleep(0.02)

    def dealer(
        self, app: TableApp, *, pace: DealerPace | None = None, shoes: int = 1
    ) -> SimulatedDealer:
        """The simulated dealer for this table once it runs (``app`` from ``open_table``);
        ``shoes`` = 0 deals shoe after shoe."""
        shuffler = next(d for d in app.runner.drivers if isinstance(d, ShufflerDriver))
        decks = int(self.config.rules.get("decks", 8))

        async def start_shuffle() -> object:
            # The dealer presses start once the shuffler's link is up (its lamp is on).
            while not shuffler.available:  # noqa: ASYNC110 - the driver has no event for it
                await asyncio.sleep(0.02)
            return await shuffler.start_shuffle(decks)

        return SimulatedDealer(
            app.runner,
            pull_card=lambda: self.shoe.request(1),
            start_shuffle=start_shuffle,
            new_shoe=self.new_shoe if shoes != 1 else None,
            pace=pace,
            shoes=shoes,
        )


async def start_card_table(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    table_id: str = "BAC-DEMO",
    game: str = "baccarat",
    decks: int = 8,
    seed: int = 11,
    speed: float = 20.0,
    prefix: str = "tablectl",
    mqtt_url: str = "embedded",
) -> CardTableSim:
    """A shuffler on a local TCP port and a barcode shoe as a USB HID keyboard (simulated pyusb
    backend, in-process), and the card table's config."""
    shuffler = SimShuffler(seed=seed, speed=speed, decks=decks)
    shuffler_port = await serve_sim(group, shuffler, f"sim:{table_id}:shuffler")
    shoe = SimShoe(seed=seed, decks=decks, rate=0)
    device = make_usb_device()
    backend = SimUsbBackend(device)
    config = lab_config(
        table_id,
        game,
        journal,
        [
            {"id": "shoe", "driver": "hid-shoe", "vid": SIM_VID, "pid": SIM_PID},
            socket_device("shuffler", "tablectl-shuffler", shuffler_port, decks=decks),
        ],
        rules={"decks": decks},
        external_betting=True,
        mqtt_url=mqtt_url,
        prefix=prefix,
    )
    sim = CardTableSim(config, shoe, backend, {"shoe": {"usb_backend": backend}}, seed=seed)
    group.create_task(sim.serve_shoe(device), name=f"sim:{table_id}:shoe")
    return sim


@dataclass
class ScriptedTableSim:
    """A house-banked poker or single-deck card game table: a barcode shoe (USB HID), a shuffler for
    standard decks, and the dealer. Decks a shuffler cannot check are shuffled by hand, the dealer
    entering the shuffle events with the deck's count, as on the floor."""

    config: TableConfig
    game: BaseGame
    shoe: SimShoe
    driver_kwargs: dict[str, dict[str, Any]] = field(default_factory=dict)
    seed: int = 0
    shuffler: bool = True

    @property
    def every_round(self) -> bool:
        return self.game.script.reshuffle == "every_round"

    def deck(self) -> list[str]:
        """The table's cards: ``decks`` decks of its ranks plus its jokers (``JK1``, ``JK2``), or
        of its symbols (``RK``, ``PA``, ``SC``)."""
        rules, symbols = self.game.rules, self.game.symbols_per_deck
        if symbols:
            return [symbol for symbol in SYMBOLS for _ in range(symbols)] * rules.decks
        jokers = [f"JK{j + 1}" for j in range(rules.jokers_per_deck)]
        one = [rank + suit for suit in SUITS for rank in rules.ranks] + jokers
        return one * rules.decks

    def new_shoe(self) -> None:
        """Load the next simulated deck or shoe, freshly shuffled (seeded)."""
        self.seed += 1
        self.shoe = _scripted_shoe(self.game, self.seed, self.deck())

    async def serve_shoe(self, device: SimUsbDevice) -> None:
        while True:
            push_lines(device, self.shoe.advance(time.monotonic()))
            await asyncio.sleep(0.02)

    def dealer(
        self, app: TableApp, *, rounds: int, pace: DealerPace | None = None
    ) -> SimulatedDealer:
        """The simulated dealer, for ``rounds`` rounds (0: on and on); a new deck for each round
        when the game shuffles every round, a new shoe after each shoe otherwise."""
        runner = app.runner
        count = len(self.deck())

        async def shuffle_by_hand() -> object:
            await runner.queue.submit(ShuffleStarted())
            return await runner.queue.submit(ShuffleCompleted(cards=count))

        start_shuffle = shuffle_by_hand
        if self.shuffler:
            shuffler = next(d for d in runner.drivers if isinstance(d, ShufflerDriver))

            async def start_shuffler() -> object:
                while not shuffler.available:  # noqa: ASYNC110 - the driver has no event for it
                    await asyncio.sleep(0.02)
                return await shuffler.start_shuffle(self.game.rules.decks)

            start_shuffle = start_shuffler
        return SimulatedDealer(
            runner,
            pull_card=lambda: self.shoe.request(1),
            start_shuffle=start_shuffle,
            new_shoe=self.new_shoe,
            count_stub=not self.every_round,
            pace=pace,
            shoes=0,  # deck after deck (or shoe after shoe) until ``rounds`` are done
            rounds=rounds,
        )


def _scripted_shoe(game: BaseGame, seed: int, deck: list[str]) -> SimShoe:
    import random  # noqa: PLC0415 - only the simulated shoe shuffles

    if game.unique_barcodes:  # war of bets (L2619): each physical card its own barcode
        serials = [f"D{n + 1:04d}" for n in range(game.rules.decks)]
        return SimShoe(seed=seed, decks=game.rules.decks, deck_serials=serials, rate=0)
    random.Random(seed).shuffle(deck)
    # A single deck shuffled every round has no cut card; a shoe has one 14 cards from the end.
    cut = None if game.script.reshuffle == "every_round" or len(deck) <= 54 else 14
    codec = BarcodeCodec(symbol_deck=SYMBOL_DECK) if game.symbols_per_deck else None
    return SimShoe(seed=seed, cards=deck, cut_from_end=cut, rate=0, codec=codec)


async def start_scripted_table(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    game: str,
    table_id: str = "POK-DEMO",
    rules: dict[str, Any] | None = None,
    seed: int = 13,
    speed: float = 50.0,
    prefix: str = "tablectl",
    mqtt_url: str = "embedded",
) -> ScriptedTableSim:
    """A scripted card game's table: barcode shoe as a USB HID keyboard (simulated pyusb backend),
    a shuffler on a local TCP port for standard decks, and the table's config."""
    raw_rules = dict(rules or {})
    loaded = load_game(game, raw_rules, source=f"<{table_id}>")
    deck, symbols = loaded.rules, loaded.symbols_per_deck
    standard = deck.jokers_per_deck == 0 and deck.ranks == RANKS and not symbols
    shoe: dict[str, Any] = {"id": "shoe", "driver": "hid-shoe", "vid": SIM_VID, "pid": SIM_PID}
    devices: list[dict[str, Any]] = [shoe | ({"symbol_deck": SYMBOL_DECK} if symbols else {})]
    if standard:
        decks = loaded.rules.decks
        shuffler = SimShuffler(seed=seed, speed=speed, decks=decks)
        port = await serve_sim(group, shuffler, f"sim:{table_id}:shuffler")
        devices.append(socket_device("shuffler", "tablectl-shuffler", port, decks=decks))
    device = make_usb_device()
    backend = SimUsbBackend(device)
    config = lab_config(
        table_id,
        game,
        journal,
        devices,
        rules=raw_rules,
        external_betting=True,
        mqtt_url=mqtt_url,
        prefix=prefix,
    )
    sim = ScriptedTableSim(
        config,
        loaded,
        SimShoe(seed=seed, cards=["AS"], cut_from_end=None, rate=0),
        {"shoe": {"usb_backend": backend}},
        seed=seed,
        shuffler=standard,
    )
    sim.new_shoe()
    group.create_task(sim.serve_shoe(device), name=f"sim:{table_id}:shoe")
    return sim


async def start_wheel_table(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    table_id: str = "DC-DEMO",
    game: str = "dream_catcher",
    segments: int = 54,
    seed: int = 3,
    speed: float = 4.0,
    every: float = 12.0,
    stops: Sequence[int] | None = None,
    prefix: str = "tablectl",
    mqtt_url: str = "embedded",
) -> TableConfig:
    """A simulated money-wheel sensor on a local TCP port, and the wheel table's config. The
    presenter opens and closes betting inside the wheel's rest of ``every`` seconds."""
    model = SimBigWheel(seed=seed, speed=speed, segments=segments, every=every, stops=stops)
    port = await serve_sim(group, model, f"sim:{table_id}:wheel")
    return lab_config(
        table_id,
        game,
        journal,
        [socket_device("wheel", "tablectl-bigwheel", port, segments=segments)],
        external_betting=True,
        mqtt_url=mqtt_url,
        prefix=prefix,
    )


@dataclass
class DrawTableSim:
    """A ball-draw table's simulated drum and the presenter's actions on it."""

    config: TableConfig
    drum: SimDrum
    draw: int

    def presenter(
        self, app: TableApp, *, betting: float = 2.0, mixing: float = 1.0, interval: float = 0.3
    ) -> SimulatedPresenter:
        """The presenter: after "no more bets" empties the receiver, mixes, releases the balls
        one by one until the table has its result (one more is tried, as a drum can over-fill)."""
        driver = next(d for d in app.runner.drivers if isinstance(d, DrumDriver))
        runner = app.runner

        async def press(button: Callable[[], Awaitable[object]]) -> bool:
            """Press a drum button; a drum that does not answer (silent, a link blip) gets it
            pressed again once it is back, as a presenter would. ``False``: the round ended."""
            while True:
                while not driver.available:  # noqa: ASYNC110 - the driver has no event for it
                    await asyncio.sleep(0.02)
                try:
                    await button()
                except DriverError:
                    if presenter.between_rounds():
                        return False
                    await asyncio.sleep(interval)
                    continue
                return True

        async def draw_balls() -> None:
            await press(driver.return_balls)
            await press(driver.start_mixing)
            await asyncio.sleep(mixing)
            for _ in range(self.draw + 1):
                if presenter.between_rounds() or not await press(driver.release_ball):
                    break
                await asyncio.sleep(interval)
            await press(driver.stop_mixing)

        presenter = SimulatedPresenter(
            runner, start=draw_balls, betting=betting, between=("idle", "drawn"), supervise=True
        )
        return presenter


async def start_draw_table(
    group: asyncio.TaskGroup,
    journal: Path,
    *,
    table_id: str = "L7-DEMO",
    game: str = "lucky7",
    balls: int = 42,
    draw: int = 7,
    channel: str = "tablectl-demo-drum",
    seed: int = 5,
    speed: float = 4.0,
    faults: Sequence[str] = (),
    prefix: str = "tablectl",
    mqtt_url: str = "embedded",
    heartbeat_timeout: float = 3.0,
) -> DrawTableSim:
    """A simulated drum on python-can's ``virtual`` bus (in-process), and the table's config.

    The drum shares the controller's loop, which can stall at start-up for longer than a real drum's
    1 s heartbeat timeout; ``heartbeat_timeout`` tolerates that, and the presenter confirms a hold
    whose fault has cleared.
    """
    model = SimDrum(
        seed=seed,
        speed=speed,
        balls=balls,
        draw=draw,
        faults=[DrumFault.from_spec(f) for f in faults],
    )
    link = CanLink("virtual", channel)
    await link.open()

    async def run_drum() -> None:
        try:
            await run_sim_drum(model, link)
        finally:
            await link.close()

    group.create_task(run_drum(), name=f"sim:{table_id}:drum")
    drum = {
        "id": "drum",
        "driver": "tablectl-drum",
        "interface": "virtual",
        "channel": channel,
        "balls": balls,
        "heartbeat_timeout": heartbeat_timeout,
    }
    config = lab_config(
        table_id, game, journal, [drum], external_betting=True, mqtt_url=mqtt_url, prefix=prefix
    )
    return DrawTableSim(config, model, draw)

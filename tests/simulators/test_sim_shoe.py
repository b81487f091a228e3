"""SimShoe against the production codecs: composition, determinism, each fault's signature,
pacing, and the servers (pty, TCP, simulated USB)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
from collections import Counter

import pytest
import serial
import usb.core
import usb.util

from tablectl.drivers.cards import full_deck
from tablectl.drivers.shoe.barcodes import BarcodeCodec, BarcodeResult, Decoded, Rejected, Signal
from tablectl.drivers.shoe.hid import HidLineDecoder
from tablectl.simulators.cli.shoe import add_arguments, build_model
from tablectl.simulators.serve import serve_pty, serve_tcp
from tablectl.simulators.shoe import (
    FOREIGN_DECK,
    HID_ENDPOINT,
    SIM_PID,
    SIM_VID,
    ShoeFault,
    SimShoe,
    encode_serial_line,
    make_usb_device,
    serve_usb,
)
from tablectl.simulators.usb_backend import SimUsbBackend
from tests.support.waiting import wait_until

SERIALS = [f"B{n:04d}" for n in range(1, 9)]
TABLE = BarcodeCodec(deck_serials=SERIALS)


def decoded(shoe: SimShoe, codec: BarcodeCodec = TABLE) -> list[BarcodeResult]:
    return [codec.decode(line) for line in shoe.script]


def cards(results: list[BarcodeResult]) -> list[str]:
    return [r.card for r in results if isinstance(r, Decoded)]


def test_full_shoe_composition() -> None:
    shoe = SimShoe(seed=1, deck_serials=SERIALS)
    results = decoded(shoe)
    assert len(shoe.cards) == 416
    assert Counter(cards(results)) == Counter({c.code: 8 for c in full_deck()})
    # Each deck contributes exactly one of each card.
    decks = Counter((r.deck, r.card) for r in results if isinstance(r, Decoded))
    assert set(decks.values()) == {1}
    assert len(decks) == 416
    # Cut card 14 from the end, shoe-empty last, nothing rejected.
    cut = results.index(Signal("cut_card"))
    assert cut == 416 - 14
    assert len(results) - cut - 2 == 14
    assert results[-1] == Signal("shoe_empty")
    assert not any(isinstance(r, Rejected) for r in results)


def test_seeded_determinism() -> None:
    faults = [ShoeFault("unreadable", 5), ShoeFault("extra", 9)]
    assert SimShoe(seed=7, faults=faults).script == SimShoe(seed=7, faults=faults).script
    assert SimShoe(seed=7).cards != SimShoe(seed=8).cards


def test_dealing_pace_does_not_change_the_lines() -> None:
    a, b = SimShoe(seed=2), SimShoe(seed=2)
    in_ones = [line for _ in range(len(a.script)) for line in a.deal(1)]
    assert in_ones == b.deal(1000) == list(a.script)
    assert a.done
    assert a.remaining == 0
    assert a.deal(3) == []


def test_scripted_cards() -> None:
    shoe = SimShoe(cards=["KH", "10s", "H2"])
    assert shoe.script == ("KH", "TS", "2H", "EMPTY")  # no cut card for a script by default
    cut = SimShoe(cards=["KH", "TS", "2H"], cut_from_end=1)
    assert cut.next_barcodes(4) == ["KH", "TS", "CUT", "2H"]


def signature(fault: str, card: int = 10) -> tuple[list[BarcodeResult], list[BarcodeResult]]:
    """(plain, faulted) decoded scripts of the same seed."""
    plain = decoded(SimShoe(seed=4, deck_serials=SERIALS))
    faulted = decoded(SimShoe(seed=4, deck_serials=SERIALS, faults=[ShoeFault(fault, card)]))
    return plain, faulted


def test_fault_unreadable() -> None:
    plain, faulted = signature("unreadable")
    assert faulted[9] == Rejected("unreadable", "unreadable characters")
    assert faulted[:9] + faulted[10:] == plain[:9] + plain[10:]


def test_fault_duplicate() -> None:
    plain, faulted = signature("duplicate")
    assert faulted[9] == faulted[10] == plain[9]
    assert faulted[:10] + faulted[11:] == plain


def test_fault_foreign() -> None:
    plain, faulted = signature("foreign")
    assert isinstance(faulted[9], Rejected)
    assert faulted[9].reason == "foreign_deck"
    assert faulted[:9] + faulted[10:] == plain
    # Without the table's deck list the foreign card would pass as a card of deck X9999.
    line = SimShoe(seed=4, deck_serials=SERIALS, faults=[ShoeFault("foreign", 10)]).script[9]
    assert line.startswith(FOREIGN_DECK + "-")


def test_fault_extra() -> None:
    plain, faulted = signature("extra")
    assert isinstance(faulted[9], Decoded)
    assert faulted[:9] + faulted[10:] == plain
    counts = Counter(cards(faulted))
    assert sum(counts.values()) == 417
    assert max(counts.values()) == 9  # one card now appears more often than decks allow


def test_fault_removed() -> None:
    plain, faulted = signature("removed")
    assert faulted[9:11] == [Signal("shoe_removed"), Signal("shoe_inserted")]
    assert faulted[:9] + faulted[11:] == plain


@pytest.mark.parametrize(("kind", "card"), [("cut_early", 100), ("cut_late", 410)])
def test_fault_cut_position(kind: str, card: int) -> None:
    _, faulted = signature(kind, card)
    assert faulted.index(Signal("cut_card")) == card
    assert faulted.count(Signal("cut_card")) == 1


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"faults": [ShoeFault("cut_early", 410)]}, "not before"),
        ({"faults": [ShoeFault("cut_late", 100)]}, "not after"),
        ({"faults": [ShoeFault("duplicate", 417)]}, "has 416 cards"),
        ({"cut_from_end": 416}, "cut_from_end"),
        ({"deck_serials": ["A"]}, "1 serials for 8 decks"),
        ({"decks": 0}, "decks"),
    ],
)
def test_inconsistent_arguments(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        SimShoe(**kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("spec", ["boom@3", "duplicate", "duplicate@0", "duplicate@x"])
def test_fault_spec_errors(spec: str) -> None:
    with pytest.raises(ValueError, match=r"KIND@CARD|unknown shoe fault|>= 1"):
        ShoeFault.from_spec(spec)


def test_fault_spec() -> None:
    assert ShoeFault.from_spec(" extra@12 ") == ShoeFault("extra", 12)


def test_pacing_by_rate_and_request() -> None:
    shoe = SimShoe(cards=["KH", "QS", "TD", "2C"], rate=2, speed=5)
    assert shoe.advance(100.0) == []  # the clock starts here
    assert shoe.advance(100.05) == []
    assert shoe.advance(100.1) == ["KH"]  # 2 lines/s × 5 = one every 0.1 s
    assert shoe.advance(100.35) == ["QS", "TD"]
    on_request = SimShoe(cards=["KH", "QS"], rate=0)
    assert on_request.advance(0.0) == []
    on_request.request(2)
    assert on_request.advance(50.0) == ["KH", "QS"]


def test_serial_encoding_keeps_misreads_unreadable() -> None:
    assert encode_serial_line("KH") == b"KH\r\n"
    assert encode_serial_line("K\ufffd") == b"K\xff\r\n"


async def test_serve_usb_types_the_shoe_as_hid_reports() -> None:
    shoe = SimShoe(cards=["KH", "10D"], rate=0)
    device = make_usb_device()
    shoe.request(3)
    task = asyncio.create_task(serve_usb(shoe, device))
    # Dealing and typing happen in one step of the server, so a dealt-out shoe is all typed.
    await wait_until(lambda: shoe.done, what="the shoe typed out")
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    # Read it back the way a host does: real pyusb over the simulated backend.
    dev = usb.core.find(idVendor=SIM_VID, idProduct=SIM_PID, backend=SimUsbBackend(device))
    dev.detach_kernel_driver(0)
    decoder = HidLineDecoder()
    lines: list[str] = []
    while device.pending_in(HID_ENDPOINT):
        lines += decoder.feed(bytes(dev.read(HID_ENDPOINT, 64, 100)))
    usb.util.dispose_resources(dev)
    assert lines == ["KH", "TD", "EMPTY"]


async def test_served_on_a_pty() -> None:
    shoe = SimShoe(cards=["KH", "QS"], rate=0)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_pty(shoe, on_ready=ready.set_result))
    try:
        path = await asyncio.wait_for(ready, 2)
        port = serial.Serial(path, timeout=1)
        try:
            shoe.request(3)
            lines = [await asyncio.to_thread(port.readline) for _ in range(3)]
        finally:
            port.close()
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)
    assert lines == [b"KH\r\n", b"QS\r\n", b"EMPTY\r\n"]


async def test_served_on_tcp() -> None:
    shoe = SimShoe(cards=["AS"], rate=50)
    ready: asyncio.Future[str] = asyncio.get_running_loop().create_future()
    server = asyncio.create_task(serve_tcp(shoe, "127.0.0.1", 0, on_ready=ready.set_result))
    try:
        host, port = (await asyncio.wait_for(ready, 2)).rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        try:
            assert await asyncio.wait_for(reader.readline(), 2) == b"AS\r\n"
            assert await asyncio.wait_for(reader.readline(), 2) == b"EMPTY\r\n"
        finally:
            writer.close()
    finally:
        server.cancel()
        await asyncio.gather(server, return_exceptions=True)


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_arguments(parser)
    return parser.parse_args(argv)


def test_cli_arguments_build_the_model() -> None:
    args = parse(
        "--tcp", "127.0.0.1:0", "--seed", "5", "--decks", "6", "--fault", "duplicate@3",
        "--fault", "cut_late@310", "--deck-serials", "A,B,C,D,E,F", "--rate", "0",
    )  # fmt: skip
    model = build_model(args)
    assert args.tcp == ("127.0.0.1", 0)
    assert (len(model.cards), model.cut_after, model.rate) == (312, 310, 0)
    assert model.script[0].startswith(tuple("ABCDEF"))
    assert build_model(parse("--cards", "KH,10D")).script == ("KH", "TD", "EMPTY")
    assert build_model(parse("--cut", "0")).cut_after is None


@pytest.mark.parametrize(
    "argv",
    [["--fault", "boom@1"], ["--cards", "KH,ZZ"], ["--decks", "9"], ["--rate", "-1"]],
)
def test_cli_rejects_bad_arguments(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        parse(*argv)

"""The per-table barcode codec: every accepted spelling, vendor formats, explicit maps, deck
serials, signals, garbage — and that decode is total (hypothesis)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tablectl.drivers.cards import SYMBOLS, full_deck, parse_card
from tablectl.drivers.shoe.barcodes import BarcodeCodec, BarcodeResult, Decoded, Rejected, Signal


def reason(result: BarcodeResult) -> str | None:
    return result.reason if isinstance(result, Rejected) else None


@pytest.mark.parametrize(
    ("barcode", "card"),
    [
        ("KH", "KH"),
        ("kh", "KH"),
        (" KH\r\n", "KH"),
        ("10H", "TH"),
        ("TH", "TH"),
        ("H10", "TH"),
        ("HT", "TH"),
        ("HK", "KH"),
        ("AS", "AS"),
        ("SA", "AS"),
        ("2c", "2C"),
        ("JK", "JK"),
        ("JK1", "JK1"),
    ],
)
def test_notation_spellings(barcode: str, card: str) -> None:
    assert BarcodeCodec().decode(barcode) == Decoded(card)


def test_every_card_in_every_spelling() -> None:
    codec = BarcodeCodec()
    for card in full_deck():
        rank = "10" if card.rank == "T" else card.rank
        for spelling in (card.code, rank + card.suit, card.suit + rank, card.suit + card.rank):
            assert codec.decode(spelling) == Decoded(card.code), spelling


def test_deck_serial_prefix() -> None:
    codec = BarcodeCodec()
    assert codec.decode("b7731-KH") == Decoded("KH", "B7731")
    assert codec.decode("B7731/10H") == Decoded("TH", "B7731")
    assert codec.decode("B7731:H10") == Decoded("TH", "B7731")


def test_table_decks_and_foreign_deck() -> None:
    codec = BarcodeCodec(deck_serials=["B1", "B2"])
    assert codec.decode("B2-KH") == Decoded("KH", "B2")
    assert reason(codec.decode("X9-KH")) == "foreign_deck"
    # The table says every card carries a serial: one without is not one of ours.
    assert reason(codec.decode("KH")) == "foreign_deck"


VENDOR = r"(?P<deck>\d{4})(?P<suit>[1-4])(?P<rank>\d{2})"
RANKS = {f"{n:02d}": r for n, r in zip(range(1, 14), "A23456789TJQK", strict=True)}
SUITS = {"1": "S", "2": "H", "3": "D", "4": "C"}


def test_vendor_pattern() -> None:
    codec = BarcodeCodec(pattern=VENDOR, rank_map=RANKS, suit_map=SUITS, deck_serials=["0042"])
    assert codec.decode("0042213") == Decoded("KH", "0042")
    assert codec.decode("0042110") == Decoded("TS", "0042")
    assert reason(codec.decode("0043213")) == "foreign_deck"
    # Matches the pattern, but rank 99 maps to nothing.
    assert reason(codec.decode("0042299")) == "unknown_barcode"
    # Notation is still tried next to the vendor format (here: no serial → foreign_deck).
    assert reason(codec.decode("KH")) == "foreign_deck"


def test_vendor_pattern_without_maps_takes_our_symbols() -> None:
    codec = BarcodeCodec(pattern=r"C(?P<rank>10|[A2-9TJQK])(?P<suit>[SHDC])", accept_notation=False)
    assert codec.decode("C10H") == Decoded("TH")
    assert codec.decode("cqs") == Rejected("unknown_barcode", "matches no configured format")
    assert reason(codec.decode("QS")) == "unknown_barcode"


def test_explicit_mapping() -> None:
    codec = BarcodeCodec(barcodes={"0412345": "KH", "0412346": "10h"}, deck_serials=["B1"])
    assert codec.decode("0412345") == Decoded("KH")  # the table's own list: no deck check
    assert codec.decode("0412346") == Decoded("TH")
    assert codec.encode("TH") == "TH"
    assert (
        BarcodeCodec(barcodes={"0412346": "TH"}, accept_notation=False).encode("10H") == "0412346"
    )


def test_signals_and_cut_card() -> None:
    codec = BarcodeCodec()
    assert codec.decode("CUT") == Signal("cut_card")
    assert codec.decode("cut") == Signal("cut_card")
    assert codec.decode("EMPTY") == Signal("shoe_empty")
    assert codec.decode("REMOVED") == Signal("shoe_removed")
    assert codec.decode("INSERTED") == Signal("shoe_inserted")
    custom = BarcodeCodec(cut_card_barcodes=["999", "CC"], signal_barcodes={"E0": "shoe_empty"})
    assert custom.decode("999") == Signal("cut_card")
    assert custom.decode("CC") == Signal("cut_card")
    assert custom.decode("E0") == Signal("shoe_empty")
    assert reason(custom.decode("EMPTY")) == "unknown_barcode"
    assert custom.signal_barcode("cut_card") == "999"


@pytest.mark.parametrize(
    "garbage",
    ["", "   ", "\r\n", "K\ufffdH", "K\x00H", "KÉ", "\x1b[A", "NOREAD", "noread", "X" * 200],
)
def test_unreadable(garbage: str) -> None:
    assert reason(BarcodeCodec().decode(garbage)) == "unreadable"


@pytest.mark.parametrize("text", ["1H", "KX", "ZZ", "KHX", "B1-", "-KH", "B1-KH-QS", "hello world"])
def test_unknown_barcode(text: str) -> None:
    assert reason(BarcodeCodec().decode(text)) == "unknown_barcode"


def test_not_text_is_unreadable() -> None:
    assert reason(BarcodeCodec().decode(b"KH")) == "unreadable"
    assert reason(BarcodeCodec().decode(None)) == "unreadable"


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"pattern": "("}, "barcode_pattern"),
        ({"pattern": r"(?P<rank>\d)"}, "lacks named group"),
        ({"rank_map": {"1": "Z"}}, "rank_map"),
        ({"suit_map": {"1": "X"}}, "suit_map"),
        ({"barcodes": {"1": "ZZ"}}, "is not a card"),
        ({"barcodes": {"CUT": "KH"}}, "in both"),
        ({"cut_card_barcodes": ["EMPTY"]}, "in both"),
        ({"signal_barcodes": {"X": "shoe_exploded"}}, "is not one of"),
        ({"deck_serials": ["a b"]}, "deck_serials"),
        ({"cut_card_barcodes": [" "]}, "empty barcode"),
    ],
)
def test_bad_configuration_fails_at_construction(options: dict[str, object], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        BarcodeCodec(**options)  # type: ignore[arg-type]


def test_encode_round_trips() -> None:
    codec = BarcodeCodec(deck_serials=["B1"])
    for card in full_deck():
        assert codec.decode(codec.encode(card.code, deck="B1")) == Decoded(card.code, "B1")
    with pytest.raises(ValueError, match="not a card"):
        codec.encode("ZZ")


CODECS = [
    BarcodeCodec(),
    BarcodeCodec(pattern=VENDOR, rank_map=RANKS, suit_map=SUITS, deck_serials=["0042"]),
    BarcodeCodec(barcodes={"123": "KH"}, accept_notation=False),
]


@given(st.text(max_size=300) | st.binary(max_size=50).map(lambda b: b.decode("latin-1")))
def test_decode_never_raises(text: str) -> None:
    for codec in CODECS:
        assert isinstance(codec.decode(text), Decoded | Signal | Rejected)


# -- symbol decks (Rock, Paper, Scissors, seed-001 L2871) ----------------------------------------

RPS = "rock_paper_scissors"


@pytest.mark.parametrize(
    ("barcode", "card"), [("RK", "RK"), ("pa", "PA"), (" SC ", "SC"), ("B7731-RK", "RK")]
)
def test_l2871_symbol_cards_decode_where_a_symbol_deck_is_configured(
    barcode: str, card: str
) -> None:
    assert BarcodeCodec(symbol_deck=RPS).decode(barcode) == Decoded(
        card, "B7731" if "-" in barcode else None
    )
    # Anywhere else they are no card.
    assert BarcodeCodec().decode(barcode) == Rejected("unknown_barcode", "not a card")


def test_l2871_symbol_cards_in_the_explicit_mapping_and_a_vendor_pattern() -> None:
    codec = BarcodeCodec(
        symbol_deck=RPS,
        barcodes={"0001": "RK"},
        pattern=r"V(?P<rank>\d\d)(?P<suit>X)?",
        rank_map={"02": "PA", "03": "SC"},
    )
    assert codec.decode("0001") == Decoded("RK")
    assert codec.decode("V03") == Decoded("SC")
    assert codec.decode("V02X") == Decoded("PA")
    with pytest.raises(ValueError, match="not a card"):
        BarcodeCodec(barcodes={"0001": "RK"})
    with pytest.raises(ValueError, match="rank_map"):
        BarcodeCodec(pattern=r"V(?P<rank>\d\d)(?P<suit>X)", rank_map={"03": "SC"})
    with pytest.raises(ValueError, match="symbol_deck"):
        BarcodeCodec(symbol_deck="tarot")  # type: ignore[arg-type]


def test_l2871_a_symbol_deck_still_decodes_a_ranked_card_for_the_game_to_refuse() -> None:
    codec = BarcodeCodec(symbol_deck=RPS)
    assert codec.decode("KH") == Decoded("KH")
    assert codec.encode("sc") == "SC"
    assert codec.symbol_deck is True
    assert BarcodeCodec().symbol_deck is False


def test_symbol_codes_never_read_as_a_ranked_card() -> None:
    # contracts §4.1 extended: no spelling of a ranked card is RK, PA or SC.
    spellings = {
        s
        for card in full_deck()
        for s in (card.code, card.suit + card.rank, card.rank.replace("T", "10") + card.suit)
    }
    assert spellings.isdisjoint(SYMBOLS)
    for symbol in SYMBOLS:
        with pytest.raises(ValueError, match="not a card"):
            parse_card(symbol)
        card = parse_card(symbol.lower(), symbols=True)
        assert (card.code, card.is_symbol, card.is_joker) == (symbol, True, False)

"""Barcode text → card, shoe signal or rejection: the per-table part of reading a shoe.

Vendors print different barcodes on the same card and shoes add their own (cut card, tray
sensors), so the mapping is configuration: one :class:`BarcodeCodec` per table, checked at start
(``ValueError``), after which :meth:`BarcodeCodec.decode` is total (a scanner can send anything).

Decoding order (first hit wins; case and surrounding whitespace ignored):

1. unreadable: empty, non-ASCII, non-printable, too long, or the scanner's ``NOREAD``;
2. the cut card and shoe-signal barcodes;
3. the explicit mapping (``barcodes``);
4. the vendor pattern: a full-match regex with groups ``rank``, ``suit`` (``deck`` optional),
   mapped through ``rank_map``/``suit_map``;
5. card notation (contracts §4.1, :func:`tablectl.drivers.cards.parse_card`), optionally after a
   deck serial: ``B7731-KH`` (``-``, ``/`` or ``:``).

With ``deck_serials``, a card naming another deck, or none, is ``foreign_deck`` (explicit
mappings are not deck-checked). Symbol decks (seed-001 L2871): ``RK``, ``PA``, ``SC`` are cards
in the mapping, in notation and as a pattern's ``rank`` (``suit`` then ignored); without one they
are ``unknown_barcode``. A standard card on a symbol table still decodes: the game refuses it
(``rank_not_in_deck``), where the dealer sees it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal, get_args

from tablectl.drivers.cards import RANKS, SUITS, SYMBOLS, parse_card
from tablectl.drivers.errors import EncodeError

SignalKind = Literal["cut_card", "shoe_empty", "shoe_removed", "shoe_inserted"]
SIGNAL_KINDS: Final[tuple[SignalKind, ...]] = get_args(SignalKind)
RejectReason = Literal["unreadable", "unknown_barcode", "foreign_deck"]
SymbolDeck = Literal["rock_paper_scissors"]
SYMBOL_DECKS: Final[tuple[SymbolDeck, ...]] = get_args(SymbolDeck)
"""The symbol decks a shoe may be configured for (``symbol_deck``)."""

DEFAULT_CUT_CARD_BARCODES: Final = ("CUT",)
DEFAULT_SIGNAL_BARCODES: Final[Mapping[str, SignalKind]] = {
    "EMPTY": "shoe_empty",
    "REMOVED": "shoe_removed",
    "INSERTED": "shoe_inserted",
}
DEFAULT_NO_READ_BARCODES: Final = ("NOREAD",)
MAX_BARCODE: Final = 128
"""Longer text is no barcode a shoe reads (Code 128 on a card edge holds a few dozen)."""

_NOTATION: Final = re.compile(r"(?:(?P<deck>[A-Z0-9_]+)[-/:])?(?P<card>[A-Z0-9]{2,3})")
_DECK_SERIAL: Final = re.compile(r"[A-Za-z0-9_]+")


@dataclass(frozen=True, slots=True)
class Decoded:
    """A card of this table: ``card`` in canonical notation, ``deck`` the serial if the barcode
    carries one (upper case)."""

    card: str
    deck: str | None = None


@dataclass(frozen=True, slots=True)
class Signal:
    """A barcode that is a shoe event rather than a card."""

    kind: SignalKind


@dataclass(frozen=True, slots=True)
class Rejected:
    """No card: ``reason`` is a stable code, ``detail`` is for people."""

    reason: RejectReason
    detail: str = ""


BarcodeResult = Decoded | Signal | Rejected


def _key(text: str) -> str:
    return text.strip().upper()


def _canonical(text: str, where: str, *, symbols: bool = False) -> str:
    try:
        return parse_card(text, symbols=symbols).code
    except ValueError:
        raise EncodeError(f"{where}: {text!r} is not a card (e.g. KH, TS, 10H)") from None


class BarcodeCodec:
    """One table's barcode rules; see the module docstring for the decoding order.

    ``ValueError`` for a bad pattern or map entry, or one barcode given two meanings.
    """

    def __init__(
        self,
        *,
        pattern: str | None = None,
        rank_map: Mapping[str, str] | None = None,
        suit_map: Mapping[str, str] | None = None,
        barcodes: Mapping[str, str] | None = None,
        deck_serials: Iterable[str] = (),
        cut_card_barcodes: Iterable[str] = DEFAULT_CUT_CARD_BARCODES,
        signal_barcodes: Mapping[str, SignalKind] | None = None,
        no_read_barcodes: Iterable[str] = DEFAULT_NO_READ_BARCODES,
        accept_notation: bool = True,
        symbol_deck: SymbolDeck | None = None,
    ) -> None:
        if symbol_deck is not None and symbol_deck not in SYMBOL_DECKS:
            raise EncodeError(f"symbol_deck: {symbol_deck!r} is not one of {SYMBOL_DECKS}")
        self._symbols = symbol_deck is not None
        self._pattern = self._compile(pattern)
        self._rank_map = {_key(k): self._rank(v) for k, v in (rank_map or {}).items()}
        self._suit_map = {_key(k): self._suit(v) for k, v in (suit_map or {}).items()}
        self._decks = frozenset(_key(d) for d in deck_serials)
        for deck in self._decks:
            if not _DECK_SERIAL.fullmatch(deck):
                raise EncodeError(f"deck_serials: {deck!r} is not a serial (letters, digits, _)")
        self._accept_notation = accept_notation
        self._meaning: dict[str, str] = {}  # barcode → what it was configured as, for conflicts
        self._no_read = self._claim(no_read_barcodes, "no_read_barcodes")
        self._signals: dict[str, SignalKind] = {}
        for code in self._claim(cut_card_barcodes, "cut_card_barcodes"):
            self._signals[code] = "cut_card"
        signals = DEFAULT_SIGNAL_BARCODES if signal_barcodes is None else signal_barcodes
        for code, kind in signals.items():
            if kind not in SIGNAL_KINDS:
                raise EncodeError(f"signal_barcodes: {kind!r} is not one of {SIGNAL_KINDS}")
            (key,) = self._claim([code], "signal_barcodes")
            self._signals[key] = kind
        self._mapping: dict[str, str] = {}
        for code, card in (barcodes or {}).items():
            (key,) = self._claim([code], "barcodes")
            self._mapping[key] = _canonical(card, f"barcodes[{code!r}]", symbols=self._symbols)

    @property
    def symbol_deck(self) -> bool:
        """Whether this table deals a symbol deck (``RK``, ``PA``, ``SC`` are cards)."""
        return self._symbols

    # --- construction helpers -----------------------------------------------------------------

    @staticmethod
    def _compile(pattern: str | None) -> re.Pattern[str] | None:
        if pattern is None:
            return None
        try:
            compiled = re.compile(pattern)
        except re.error as exc:
            raise EncodeError(f"barcode_pattern {pattern!r}: {exc}") from None
        missing = {"rank", "suit"} - set(compiled.groupindex)
        if missing:
            raise EncodeError(
                f"barcode_pattern {pattern!r} lacks named group(s) {', '.join(sorted(missing))}"
            )
        return compiled

    def _rank(self, value: str) -> str:
        rank = _key(value)
        rank = "T" if rank == "10" else rank
        if self._symbols and rank in SYMBOLS:
            return rank
        if rank not in RANKS and rank not in ("JK", "JK1", "JK2"):
            raise EncodeError(f"rank_map: {value!r} is not a rank ({' '.join(RANKS)} or JK)")
        return rank

    @staticmethod
    def _suit(value: str) -> str:
        suit = _key(value)
        if len(suit) != 1 or suit not in SUITS:
            raise EncodeError(f"suit_map: {value!r} is not a suit ({' '.join(SUITS)})")
        return suit

    def _claim(self, codes: Iterable[str], where: str) -> frozenset[str]:
        keys = []
        for code in codes:
            key = _key(code)
            if not key:
                raise EncodeError(f"{where}: empty barcode")
            if key in self._meaning:
                raise EncodeError(f"barcode {code!r} is in both {self._meaning[key]} and {where}")
            self._meaning[key] = where
            keys.append(key)
        return frozenset(keys)

    # --- decoding -------------------------------------------------------------------------------

    def decode(self, barcode: object) -> BarcodeResult:
        """Classify one scanned barcode. Total: never raises, whatever ``barcode`` is."""
        if not isinstance(barcode, str):
            return Rejected("unreadable", f"not text: {type(barcode).__name__}")
        text = barcode.strip()
        if not text:
            return Rejected("unreadable", "empty")
        if not (text.isascii() and text.isprintable()):
            return Rejected("unreadable", "unreadable characters")
        if len(text) > MAX_BARCODE:
            return Rejected("unreadable", f"longer than {MAX_BARCODE} characters")
        key = text.upper()
        if key in self._no_read:
            return Rejected("unreadable", "scanner reported no read")
        if (kind := self._signals.get(key)) is not None:
            return Signal(kind)
        if (card := self._mapping.get(key)) is not None:
            return Decoded(card)
        if self._pattern is not None and (match := self._pattern.fullmatch(text)):
            return self._from_vendor(match)
        if self._accept_notation and (match := _NOTATION.fullmatch(key)):
            try:
                code = parse_card(match["card"], symbols=self._symbols).code
            except ValueError:
                return Rejected("unknown_barcode", "not a card")
            return self._deck_checked(code, match["deck"])
        return Rejected("unknown_barcode", "matches no configured format")

    def _from_vendor(self, match: re.Match[str]) -> BarcodeResult:
        raw_rank, raw_suit = _key(match["rank"] or ""), _key(match["suit"] or "")
        rank = self._rank_map.get(raw_rank, "T" if raw_rank == "10" else raw_rank)
        suit = self._suit_map.get(raw_suit, raw_suit)
        deck = match.groupdict().get("deck")
        if rank in ("JK", "JK1", "JK2") or (self._symbols and rank in SYMBOLS):
            return self._deck_checked(rank, deck)
        if len(rank) != 1 or rank not in RANKS or len(suit) != 1 or suit not in SUITS:
            return Rejected("unknown_barcode", f"vendor symbols {raw_rank!r}/{raw_suit!r}")
        return self._deck_checked(rank + suit, deck)

    def _deck_checked(self, card: str, deck: str | None) -> BarcodeResult:
        serial = _key(deck) if deck else None
        if self._decks and serial not in self._decks:
            what = f"deck {serial!r}" if serial else "no deck serial"
            return Rejected("foreign_deck", f"{what}; the table's decks are {sorted(self._decks)}")
        return Decoded(card, serial)

    # --- encoding (simulators) ---------------------------------------------------------------

    def encode(self, card: str, *, deck: str | None = None) -> str:
        """A barcode this codec decodes to ``card`` (and ``deck``): notation, or the explicit
        mapping's when notation is off. Vendor patterns are not invertible (``ValueError``).
        """
        code = _canonical(card, "encode", symbols=self._symbols)
        if self._accept_notation:
            return f"{deck}-{code}" if deck else code
        for barcode, mapped in self._mapping.items():
            if mapped == code:
                return barcode
        raise EncodeError(f"this codec has no barcode for {code}")

    def signal_barcode(self, kind: SignalKind) -> str:
        """The first configured barcode for ``kind`` (what a simulated shoe sends)."""
        for barcode, configured in sorted(self._signals.items()):
            if configured == kind:
                return barcode
        raise EncodeError(f"no barcode is configured for {kind}")

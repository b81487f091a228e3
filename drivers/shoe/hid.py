"""USB HID boot-keyboard reports ↔ text lines: how a keyboard-wedge barcode scanner "types".

Read with pyusb rather than as OS keystrokes, a scanner sends 8-byte boot reports (HID 1.11,
appendix B.1)::

    byte 0  modifier bits: 0 LCtrl, 1 LShift, 2 LAlt, 3 LGUI, 4 RCtrl, 5 RShift, 6 RAlt, 7 RGUI
    byte 1  reserved
    2..7    up to six usage IDs of the keys held down now (HID Usage Tables, page 0x07)

A report is the keyboard's state: a character comes only where its usage first appears (so
``TT`` needs a release between). Usages 0x01–0x03 mark a phantom state and are skipped. US
layout; an untypable key (F-keys, Tab, chords) becomes U+FFFD rather than being dropped, since
dropping could turn a misread into a different valid barcode. Enter ends a line. Pure;
:func:`encode_line` is the exact inverse.
"""

from __future__ import annotations

from typing import Final

from tablectl.drivers.errors import EncodeError

REPORT_SIZE: Final = 8
ENTER: Final = 0x28
KEYPAD_ENTER: Final = 0x58
UNMAPPED: Final = "\ufffd"
"""What a key without a character decodes to (and what :func:`encode_line` sends as F1)."""

_UNMAPPED_KEY: Final = 0x3A  # F1
_SHIFT_BITS: Final = 0x22  # LShift | RShift
_CHORD_BITS: Final = 0xDD  # Ctrl, Alt, GUI (left and right): the key is a command, not text
_PHANTOM: Final = frozenset({0x01, 0x02, 0x03})
_MAX_LINE: Final = 256
"""Characters kept per line; a scanner never types more, so more means a stuck or hostile device."""


def _build_tables() -> tuple[dict[int, tuple[str, str]], dict[str, tuple[int, bool]]]:
    keys: dict[int, tuple[str, str]] = {}
    for i, ch in enumerate("abcdefghijklmnopqrstuvwxyz"):
        keys[0x04 + i] = (ch, ch.upper())
    for i, (plain, shifted) in enumerate(zip("1234567890", "!@#$%^&*()", strict=True)):
        keys[0x1E + i] = (plain, shifted)
    for usage, plain, shifted in (
        (0x2C, " ", " "),
        (0x2D, "-", "_"),
        (0x2E, "=", "+"),
        (0x2F, "[", "{"),
        (0x30, "]", "}"),
        (0x31, "\\", "|"),
        (0x33, ";", ":"),
        (0x34, "'", '"'),
        (0x35, "`", "~"),
        (0x36, ",", "<"),
        (0x37, ".", ">"),
        (0x38, "/", "?"),
    ):
        keys[usage] = (plain, shifted)
    # Some scanners type digits on the keypad (num-lock assumed on; shift does not apply).
    keypad = {0x54: "/", 0x55: "*", 0x56: "-", 0x57: "+", 0x62: "0", 0x63: "."}
    keypad |= {0x59 + i: str(i + 1) for i in range(9)}
    for usage, ch in keypad.items():
        keys[usage] = (ch, ch)
    # The encoder uses the main block only (as a scanner in its default mode does).
    encode: dict[str, tuple[int, bool]] = {}
    for usage, (plain, shifted) in sorted(keys.items()):
        if usage >= 0x54:
            continue
        encode.setdefault(plain, (usage, False))
        encode.setdefault(shifted, (usage, True))
    encode[UNMAPPED] = (_UNMAPPED_KEY, False)
    return keys, encode


_KEYS, _ENCODE = _build_tables()


class HidLineDecoder:
    """Boot-keyboard input reports in, the lines the scanner typed out.

    Counters: ``malformed`` (not 8 bytes), ``phantom``, ``unmapped`` (U+FFFD), ``overflows`` (cut at
    256 characters, ending in U+FFFD).
    """

    def __init__(self) -> None:
        self._held: frozenset[int] = frozenset()
        self._line: list[str] = []
        self._overflowed = False
        self.malformed = 0
        self.phantom = 0
        self.unmapped = 0
        self.overflows = 0

    def reset(self) -> None:
        """Forget held keys and a partial line (after a reconnect: the old state is stale)."""
        self._held = frozenset()
        self._line = []
        self._overflowed = False

    def feed(self, report: bytes) -> list[str]:
        """One input report in; the lines completed by it (usually none, at most a few) out."""
        if len(report) != REPORT_SIZE:
            self.malformed += 1
            return []
        usages = report[2:]
        if any(u in _PHANTOM for u in usages):
            self.phantom += 1
            return []
        modifiers = report[0]
        down = [u for u in usages if u != 0]
        new = [u for u in dict.fromkeys(down) if u not in self._held]
        self._held = frozenset(down)
        lines: list[str] = []
        for usage in new:
            if usage in (ENTER, KEYPAD_ENTER):
                lines.append(self._take_line())
            else:
                self._append(self._char(usage, modifiers))
        return lines

    def _char(self, usage: int, modifiers: int) -> str:
        pair = _KEYS.get(usage)
        if pair is None or modifiers & _CHORD_BITS:
            self.unmapped += 1
            return UNMAPPED
        return pair[1] if modifiers & _SHIFT_BITS else pair[0]

    def _append(self, ch: str) -> None:
        if len(self._line) < _MAX_LINE:
            self._line.append(ch)
        elif not self._overflowed:
            self._overflowed = True
            self.overflows += 1

    def _take_line(self) -> str:
        line = "".join(self._line) + (UNMAPPED if self._overflowed else "")
        self._line = []
        self._overflowed = False
        return line


def encode_line(text: str, *, enter: bool = True) -> list[bytes]:
    """The reports a US-layout scanner sends to type ``text`` then Enter.

    U+FFFD is typed as F1, which decodes back to U+FFFD, so a simulated misread survives the round
    trip. ``ValueError`` for a character no key types.
    """
    release = bytes(REPORT_SIZE)
    reports: list[bytes] = []
    for ch in text:
        try:
            usage, shift = _ENCODE[ch]
        except KeyError:
            raise EncodeError(f"no key types {ch!r} (in {text!r})") from None
        reports += [bytes([0x02 if shift else 0, 0, usage, 0, 0, 0, 0, 0]), release]
    if enter:
        reports += [bytes([0, 0, ENTER, 0, 0, 0, 0, 0]), release]
    return reports

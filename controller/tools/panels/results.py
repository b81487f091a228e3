"""Each game family's recent results, drawn the way its people read them (a roulette strip, a bead
road, ball colours, dice faces; else the one-line summaries), never wider than ``width`` and only
what the outcome published."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

from rich.style import Style
from rich.text import Text

from tablectl.controller.tools.panels.model import ResultMark, TableView, clean

RED: Final = Style(color="bright_white", bgcolor="red", bold=True)
BLACK: Final = Style(color="bright_white", bgcolor="black", bold=True)
GREEN: Final = Style(color="bright_white", bgcolor="green", bold=True)
VOID: Final = Style(color="bright_black")
_POCKET: Final[Mapping[str, Style]] = {"red": RED, "black": BLACK, "green": GREEN}

BEAD_KINDS: Final = frozenset(
    {
        "Baccarat",
        "GoldenWealthBaccarat",
        "LightningBaccarat",
        "DragonTiger",
        "AndarBahar",
        "TopCard",
        "Bet21",
    }
)
"""Card games with a side that wins each round: drawn as a bead road."""
_BEADS: Final[Mapping[str, tuple[str, str]]] = {
    "banker": ("B", "red"),
    "player": ("P", "blue"),
    "tie": ("T", "green"),
    "dragon": ("D", "red"),
    "tiger": ("T", "blue"),
    "andar": ("A", "red"),
    "bahar": ("B", "blue"),
    "dealer": ("D", "red"),
    "player1": ("1", "red"),
    "player2": ("2", "blue"),
}
"""Winner → bead letter and colour (red: the first side, blue: the second, green: a tie)."""

_SUITS: Final[Mapping[str, tuple[str, str]]] = {
    "S": ("♠", "bright_white"),
    "C": ("♣", "bright_white"),
    "H": ("♥", "bright_red"),
    "D": ("♦", "bright_red"),
}
_CARD: Final = re.compile(r"(?<![A-Za-z0-9])([2-9TJQKA])([SHDC])(?![A-Za-z0-9])")
"""A card code as published (contracts §4.1), standing on its own in a summary."""

_FACES: Final = "⚀⚁⚂⚃⚄⚅"
_BALL_COLOURS: Final[Mapping[str, str]] = {
    "green": "green",
    "black": "black",
    "brown": "orange4",
    "orange": "dark_orange",
    "yellow": "yellow",
    "purple": "purple",
    "red": "red",
    "blue": "blue",
    "pink": "hot_pink",
    "white": "grey85",
    "gold": "gold1",
    "grey": "grey50",
}
_DECADES: Final = ("yellow", "blue", "red", "grey50", "green", "purple", "dark_orange", "cyan")
"""A ball's colour by its tens when the result names none (lotto convention)."""
_SEGMENTS: Final[Mapping[str, str]] = {
    "1": "yellow",
    "2": "blue",
    "5": "magenta",
    "10": "green",
    "20": "dark_orange",
    "40": "red",
    "2x": "grey85",
    "7x": "gold1",
}
"""Dream Catcher's segment colours; other wheels' labels get a colour of :data:`_PALETTE`."""
_DARK: Final = frozenset({"black", "blue", "purple", "red", "magenta", "green", "orange4"})
"""Backgrounds that take white text."""
_PALETTE: Final = ("cyan", "magenta", "yellow", "green", "blue", "dark_orange", "purple", "red")


def result_lines(view: TableView, width: int, *, compact: bool = False) -> list[Text]:
    """The recent results of ``view``'s table as its game family draws them."""
    marks = view.results
    if not marks or width < 4:
        return []
    draw = _RENDERERS.get(view.family)
    if draw is None and view.kind in BEAD_KINDS:
        draw = _bead_lines
    if draw is None:
        lines = summary_lines(marks, 1 if compact else 3)
    else:  # the picture, then the newest round's line (compact: the footer has it)
        lines = draw(view, marks, width, compact)
        lines += [] if compact else [card_text(marks[-1].summary)]
    return [_fit(line, width) for line in lines]


def live_line(view: TableView, width: int) -> Text | None:
    """What the ``state`` shows of the round in play: the shoe and the coup's cards, the balls
    drawn so far, the craps point; ``None`` when there is nothing to add to the phase."""
    state = view.live
    parts: list[Text] = []
    shoe = state.get("shoe")
    if isinstance(shoe, Mapping) and shoe.get("size"):
        parts.append(Text(f"shoe {shoe.get('remaining')}/{shoe.get('size')}", "dim"))
    coup = state.get("coup")
    if isinstance(coup, Mapping) and any(coup.values()):
        hands = []
        for side, cards in coup.items():
            shown = [c if isinstance(c, str) else "▮" for c in cards or ()]
            if shown:
                hands.append(f"{clean(side, 12)} {' '.join(clean(c, 4) for c in shown)}")
        parts.append(card_text(" · ".join(hands)))
    balls = state.get("balls")
    if view.family == "draw" and isinstance(balls, list) and balls:
        parts.append(Text("drawing ", "dim") + _balls(balls, (), width)[0])
    craps = state.get("craps")
    if isinstance(craps, Mapping):
        point = craps.get("point")
        parts.append(Text(f"point {point}" if point else "come out", "bold"))
    lightning = state.get("lightning")
    if isinstance(lightning, list) and lightning:
        picks = " ".join(
            f"{p.get('value')}x{p.get('multiplier')}" for p in lightning if isinstance(p, Mapping)
        )
        parts.append(Text(f"⚡ {clean(picks)}", "yellow"))
    if not parts:
        return None
    return _fit(Text("  ").join(parts), width)


# -- roulette -------------------------------------------------------------------------------------


def roulette_strip(marks: Sequence[ResultMark], width: int, rows: int = 1) -> list[Text]:
    """The last numbers, newest first, each on its pocket's colour; as many as fit ``rows``."""
    cells = [_pocket_cell(mark) for mark in reversed(marks)]
    return _pack(cells, width, rows)


def _pocket_cell(mark: ResultMark) -> Text:
    result = mark.result
    if mark.status == "void" or not result:
        return Text(" × ", VOID)
    balls = [b for b in result.get("per_ball") or () if isinstance(b, Mapping)]
    if balls:  # double ball: both numbers, each on its colour
        cell = Text(" ")
        for index, ball in enumerate(balls):
            if index:
                cell.append("+")
            cell.append(str(ball.get("number")), _POCKET.get(str(ball.get("color")), BLACK))
        return cell + Text(" ")
    style = _POCKET.get(str(result.get("color")), BLACK)
    cell = Text(f" {clean(result.get('number'), 3)} ", style)
    multiplier = result.get("multiplier")
    if isinstance(multiplier, int) and multiplier > 1:
        cell.append(f"x{multiplier} ", "bold yellow")
    return cell


def _roulette(
    view: TableView, marks: Sequence[ResultMark], width: int, compact: bool
) -> list[Text]:
    return roulette_strip(marks, width, 1 if compact else 2)


# -- cards ----------------------------------------------------------------------------------------


def card_text(text: str, style: str = "") -> Text:
    """``text`` with every card code drawn as rank and suit symbol (``7S`` → ``7♠``)."""
    out = Text(style=style)
    at = 0
    for match in _CARD.finditer(text):
        out.append(text[at : match.start()])
        symbol, colour = _SUITS[match.group(2)]
        out.append(match.group(1) + symbol, f"bold {colour}")
        at = match.end()
    out.append(text[at:])
    return out


def bead_road(marks: Sequence[ResultMark], width: int, rows: int = 6, kind: str = "") -> list[Text]:
    """A bead road: one bead per round, down the rows then the next column; the newest columns
    that fit ``width`` (two cells a bead)."""
    columns = max(width // 2, 1)
    needed = -(-len(marks) // rows)
    start = max(needed - columns, 0) * rows
    shown = list(marks[start:])
    lines = []
    for row in range(rows):
        line = Text()
        for index in range(row, len(shown), rows):
            line.append_text(_bead(shown[index], kind))
            line.append(" ")
        lines.append(line)
    return lines


def _bead(mark: ResultMark, kind: str) -> Text:
    if mark.status == "void":
        return Text("×", VOID)
    winner = str(mark.result.get("winner") or "")
    if mark.result.get("tie") is True:
        winner = "tie"
    letter, colour = _BEADS.get(winner, (winner[:1].upper() or "?", "yellow"))
    if winner == "tie" and kind == "DragonTiger":
        letter = "="  # T is the tiger's
    bold = "bold underline" if mark.result.get("natural") else "bold"
    return Text(letter, f"{bold} {colour}")


def _bead_lines(
    view: TableView, marks: Sequence[ResultMark], width: int, compact: bool
) -> list[Text]:
    return bead_road(marks, width, 3 if compact else 6, view.kind)


def summary_lines(marks: Sequence[ResultMark], count: int) -> list[Text]:
    """The newest ``count`` one-line summaries, newest first, cards as symbols."""
    return [
        card_text(mark.summary, "" if index == 0 else "dim")
        for index, mark in enumerate(reversed(marks[-count:]))
    ]


# -- money wheels ---------------------------------------------------------------------------------


def wheel_strip(marks: Sequence[ResultMark], width: int, rows: int = 1) -> list[Text]:
    """The last segments, newest first: label (and multiplier) on the segment's colour."""
    return _pack([_segment_cell(mark) for mark in reversed(marks)], width, rows)


def _segment_cell(mark: ResultMark) -> Text:
    result = mark.result
    if mark.status == "void" or not result:
        return Text(" × ", VOID)
    label = clean(result.get("segment"), 12)
    colour = str(result.get("color") or "") or _SEGMENTS.get(label) or _hashed(label)
    colour = _BALL_COLOURS.get(colour, colour)
    text = f" {label.replace('_', ' ')} "
    multiplier = result.get("multiplier")
    if isinstance(multiplier, int) and multiplier > 1:
        text += f"x{multiplier} "
    bold = "bold " if result.get("kind") == "bonus" else ""
    return Text(text, f"{bold}{_ink(colour)} on {colour}")


def _wheel(view: TableView, marks: Sequence[ResultMark], width: int, compact: bool) -> list[Text]:
    return wheel_strip(marks, width, 1 if compact else 2)


# -- draws ----------------------------------------------------------------------------------------


def draw_lines(marks: Sequence[ResultMark], width: int, rows: int = 2) -> list[Text]:
    """The newest settled draw's balls in their colours (``rows`` lines at most), its bonus."""
    last = next((m for m in reversed(marks) if m.status != "void" and m.result), None)
    if last is None:
        return []
    result = last.result
    colours = [str(c) for c in result.get("ball_colors") or ()]
    lines = _balls(list(result.get("balls") or ()), colours, width, rows)
    bonus = result.get("bonus")
    if bonus:
        lines.append(Text(f"bonus {' '.join(clean(b, 4) for b in bonus)}", "bold"))
    return lines


def _balls(balls: Sequence[Any], colours: Sequence[str], width: int, rows: int = 1) -> list[Text]:
    cells = []
    for index, ball in enumerate(balls):
        name = colours[index] if index < len(colours) else ""
        colour = _BALL_COLOURS.get(name) or _decade(ball)
        cells.append(Text(f"{clean(ball, 3):>3} ", f"bold {_ink(colour)} on {colour}"))
    packed = _pack(cells, width, rows)
    return packed or [Text()]


def _decade(ball: Any) -> str:
    return _DECADES[ball // 10 % len(_DECADES)] if isinstance(ball, int) else "grey50"


def _draw(view: TableView, marks: Sequence[ResultMark], width: int, compact: bool) -> list[Text]:
    return draw_lines(marks, width, 1 if compact else 2)


# -- dice -----------------------------------------------------------------------------------------


def dice_lines(marks: Sequence[ResultMark], width: int, history: bool = True) -> list[Text]:
    """The last roll's faces, then the totals of the rolls before (newest first)."""
    last = marks[-1]
    result = last.result
    line = Text()
    if "red" in result and "blue" in result:  # dice duel: told apart by colour
        line.append(_face(result.get("red")), "bold red")
        line.append(" ")
        line.append(_face(result.get("blue")), "bold blue")
    else:
        line.append(" ".join(_face(d) for d in result.get("dice") or ()), "bold")
    lines = [line] if line.plain else []
    if history and len(marks) > 1:
        totals = [
            "×" if m.status == "void" else clean(m.result.get("total"), 3)
            for m in reversed(marks[:-1])
        ]
        lines.append(Text("before: " + " ".join(totals), "dim"))
    return lines


def _face(value: Any) -> str:
    return _FACES[value - 1] if isinstance(value, int) and 1 <= value <= 6 else "?"


def _dice(view: TableView, marks: Sequence[ResultMark], width: int, compact: bool) -> list[Text]:
    return dice_lines(marks, width, history=not compact)


# -- helpers --------------------------------------------------------------------------------------

_Renderer = Callable[[TableView, Sequence[ResultMark], int, bool], list[Text]]

_RENDERERS: Final[Mapping[str, _Renderer]] = {
    "roulette": _roulette,
    "wheel": _wheel,
    "draw": _draw,
    "dice": _dice,
}
"""By engine family; card games go by their class (:data:`BEAD_KINDS`), the rest are summaries."""


def _pack(cells: Sequence[Text], width: int, rows: int) -> list[Text]:
    """Cells side by side, ``rows`` lines at most; a cell that does not fit starts the next line
    (the cells beyond the last line are left out: put the newest first)."""
    lines: list[Text] = []
    line = Text()
    for cell in cells:
        if line.cell_len + cell.cell_len > width:
            lines.append(line)
            if len(lines) >= rows:
                return lines
            line = Text()
        line.append_text(cell if cell.cell_len <= width else cell[:width])
    if line.plain:
        lines.append(line)
    return lines


def _fit(line: Text, width: int) -> Text:
    line.no_wrap = True
    line.overflow = "ellipsis"
    if line.cell_len > width:
        line.truncate(width, overflow="ellipsis")
    return line


def _ink(background: str) -> str:
    """The text colour that reads on ``background``."""
    return "bright_white" if background in _DARK else "black"


def _hashed(label: str) -> str:
    return _PALETTE[sum(label.encode()) % len(_PALETTE)]

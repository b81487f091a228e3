"""One short line per published outcome, for a person: ``ROU-01 #000123 17 black (6 turns)``.

A reader of the MQTT contract, not of the rules: it decides nothing, so it lives with the tools.
A game outside the catalog or an unknown result gets :func:`facts`. No line shows raw JSON,
exceeds :data:`MAX_LENGTH`, or shows a card the payload does not. Pure.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Final

from tablectl.controller.games.catalog import CATALOG

MAX_LENGTH: Final = 100
"""No summary line is longer (a wider result is cut with ``…``)."""

Result = Mapping[str, Any]
Summary = Callable[[str, Result], str]
"""``(game, result) -> text`` after the line's head (table and round)."""


def summarize(payload: Mapping[str, Any]) -> str:
    """``TABLE #ROUND text`` for an outcome payload; ``… VOID reason`` for a void; either ends
    with ``· dealt by ID`` when the outcome names its dealer (docs/station.md): "dealer" alone
    is the dealer's hand in a card game's summary."""
    head = _head(payload)
    dealer = payload.get("dealer")
    tail = f" · dealt by {_clip(dealer, 32)}" if isinstance(dealer, str) and dealer else ""
    if payload.get("status") == "void":
        return _clip(f"{head} VOID {payload.get('reason') or 'no reason'}", tail=tail)
    game = str(payload.get("game") or "")
    result = payload.get("result")
    if not isinstance(result, Mapping):
        return _clip(f"{head} {payload.get('status') or 'settled'}", tail=tail)
    try:
        text = _summary_for(game)(game, result)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError):
        text = ""  # a result of an unexpected shape: its facts, never a crash in a viewer
    return _clip(f"{head} {text or facts(result)}", tail=tail)


def facts(mapping: Mapping[str, Any], *, limit: int = 6, empty: str = "settled") -> str:
    """The first ``limit`` scalar (or scalar list) fields as ``key=value`` (``empty`` if none);
    never JSON."""
    parts: list[str] = []
    for key, value in mapping.items():
        if len(parts) >= limit:
            break
        if isinstance(value, bool) or value is None:
            if value:
                parts.append(str(key))
        elif isinstance(value, str | int | float):
            parts.append(f"{key}={value}")
        elif isinstance(value, list | tuple) and all(
            isinstance(v, str | int | float) for v in value
        ):
            parts.append(f"{key}={_join(value, 6, sep=',')}")
    return " ".join(parts) or empty


# -- helpers --------------------------------------------------------------------------------------


def _head(payload: Mapping[str, Any]) -> str:
    table = str(payload.get("table") or "?")
    round_id = str(payload.get("round") or "")
    number = round_id.removeprefix(f"{table}-") if round_id.startswith(f"{table}-") else round_id
    if not number:
        return table
    return f"{table} #{number}"


_DROPPED: Final = frozenset({"Cf", "Cs", "Co", "Cn"})
"""Format characters (the bidi overrides and isolates, zero-width joiners), surrogates, private
use and unassigned code points: removed from published text, never shown."""
_MARKS: Final = 2
"""Combining marks kept after a character (a "zalgo" pile of them overflows any line)."""


def printable(value: object, limit: int | None = None) -> str:
    """Text from the broker made safe to show on one line, the one function every viewer uses
    (the dashboard's pages, ``watch``, the summaries): bidi controls and other format characters
    removed (``ROU-\\u202e10-UOR`` shows as ``ROU-10-UOR``, never reversed), control characters
    and line breaks as spaces, at most two combining marks in a row, and at most ``limit``
    characters (cut with ``…``)."""
    out: list[str] = []
    marks = 0
    for ch in str(value):
        if ch.isprintable():
            category = unicodedata.category(ch)
            marks = marks + 1 if category.startswith("M") else 0
            if marks <= _MARKS:
                out.append(ch)
        elif unicodedata.category(ch) not in _DROPPED:
            out.append(" ")
            marks = 0
        if limit is not None and len(out) > limit:
            break
    text = "".join(out)
    return text if limit is None or len(text) <= limit else text[: limit - 1] + "…"


def _clip(line: str, limit: int = MAX_LENGTH, *, tail: str = "") -> str:
    """``line`` cut to leave room for ``tail`` (the dealer stays on a long line)."""
    # Published strings (a reason, a plug-in's field) are not ours: keep the line one line.
    line = printable(line).replace("{", "(").replace("}", ")")
    room = limit - len(tail)
    return (line if len(line) <= room else line[: room - 1] + "…") + tail


def _join(values: Iterable[Any], most: int, *, sep: str = " ") -> str:
    items = [str(v) for v in values]
    if len(items) <= most:
        return sep.join(items)
    return sep.join(items[:most]) + f"{sep}…+{len(items) - most}"


def _cards(value: Any) -> list[str]:
    """The card codes of a ``{"cards": [..]}`` side or a list (``None`` / withheld: none)."""
    if isinstance(value, Mapping):
        value = value.get("cards")
    return [str(c) for c in value or () if isinstance(c, str)]


def _board(result: Result) -> str:
    board = result.get("board") or {}
    if isinstance(board, Mapping):
        cards = [
            c for street in ("flop", "turn", "river", "cards") for c in _cards(board.get(street))
        ]
    else:
        cards = _cards(board)
    return " ".join(cards)


def _tally(values: Iterable[Any]) -> str:
    """``2 win, 1 lose`` in first-seen order."""
    counts: dict[str, int] = {}
    for value in values:
        if value is not None:
            counts[str(value)] = counts.get(str(value), 0) + 1
    return ", ".join(f"{n} {v.replace('_', ' ')}" for v, n in counts.items())


def _boxes(result: Result) -> list[Mapping[str, Any]]:
    boxes = result.get("boxes") or {}
    items = boxes.values() if isinstance(boxes, Mapping) else boxes
    return [box for box in items if isinstance(box, Mapping)]


def _dealer_hand(result: Result) -> str:
    dealer = result.get("dealer")
    if not isinstance(dealer, Mapping):
        return ""
    hand = str(dealer.get("hand") or " ".join(_cards(dealer)))
    if dealer.get("qualifies") is False:
        hand += " (no qualify)"
    return f"dealer {hand}"


def _title(word: Any) -> str:
    return str(word).replace("_", " ").capitalize()


def _turns(revolutions: Any) -> str:
    return f" ({revolutions} turns)" if isinstance(revolutions, int) else ""


def _picks(picks: Any, key: str = "value") -> str:
    return " ".join(
        f"{p.get(key, p.get('card'))}x{p.get('multiplier')}"
        for p in picks or ()
        if isinstance(p, Mapping)
    )


# -- roulette -------------------------------------------------------------------------------------


def _roulette(game: str, result: Result) -> str:
    if "per_ball" in result or game == "double_ball_roulette":
        balls = [b for b in result.get("per_ball") or () if isinstance(b, Mapping)]
        text = " + ".join(f"{b.get('number')} {b.get('color', '')}".strip() for b in balls)
        text = text or _join(result.get("numbers") or (), 2, sep=" + ")
        return text + (" (same number)" if result.get("same_number") else "")
    text = f"{result['number']} {result.get('color', '')}".rstrip()
    if "lightning" in result:
        multiplier = result.get("multiplier")
        text += f" x{multiplier}" if multiplier else ""
        text += (
            f"{_turns(result.get('revolutions'))} lightning {_picks(result['lightning']) or '-'}"
        )
        return text
    return text + _turns(result.get("revolutions"))


# -- cards ----------------------------------------------------------------------------------------


def _baccarat(game: str, result: Result) -> str:
    winner = str(result.get("winner") or "")
    player, banker = result.get("player") or {}, result.get("banker") or {}
    first, second = (banker, player) if winner == "banker" else (player, banker)
    text = f"{_title(winner)} {first.get('total')}–{second.get('total')}"
    flags = [f for f in ("natural", "player_pair", "banker_pair") if result.get(f)]
    if flags:
        text += f" ({', '.join(f.replace('_', ' ') for f in flags)})"
    multiplier = result.get("multiplier")
    if isinstance(multiplier, int) and multiplier > 1:
        text += f" x{multiplier}"
    return f"{text}  P {' '.join(_cards(player))} / B {' '.join(_cards(banker))}"


def _dragon_tiger(game: str, result: Result) -> str:
    winner = _title(result.get("winner") or "")
    dragon, tiger = result.get("dragon"), result.get("tiger")
    if isinstance(dragon, str) and isinstance(tiger, str):
        suited = " (suited)" if result.get("suited_tie") else ""
        return f"{winner}{suited} · dragon {dragon} v tiger {tiger}"
    return f"{winner} {facts(result, limit=4)}"


def _blackjack(game: str, result: Result) -> str:
    dealer = result.get("dealer") or {}
    state = (
        "bust" if dealer.get("bust") else "BJ" if dealer.get("blackjack") else dealer.get("total")
    )
    parts = [f"dealer {state} ({' '.join(_cards(dealer))})"]
    for box in _boxes(result):
        hands = [h for h in box.get("hands") or () if isinstance(h, Mapping)]
        for hand in hands:
            total = "BJ" if hand.get("blackjack") else hand.get("total")
            bust = " bust" if hand.get("bust") else ""
            parts.append(f"box{box.get('box')} {total}{bust} {hand.get('result')}")
    return _join(parts, 5, sep=" · ")


def _poker_vs_dealer(game: str, result: Result) -> str:
    """Hold'em, stud and card poker: the board, the dealer's hand, the boxes' results."""
    parts = [text for text in (_board(result), _dealer_hand(result)) if text]
    boxes = _boxes(result)
    player = result.get("player")
    if not boxes and isinstance(player, Mapping):
        boxes = [player]
    outcomes = [b.get("result") or b.get("versus") for b in boxes]
    if any(o is not None for o in outcomes):
        parts.append(f"boxes {_tally(outcomes)}")
    elif result.get("winner"):
        parts.append(f"{_title(result['winner'])} wins")
    return " · ".join(parts)


def _poker_room(game: str, result: Result) -> str:
    seats = result.get("seats") or []
    folded = result.get("folded") or []
    return (
        f"board {_board(result) or '-'} · {len(seats)} seats, {len(folded)} folded, "
        f"{result.get('burns', 0)} burns"
    )


def _andar_bahar(game: str, result: Result) -> str:
    joker = result.get("joker") or {}
    winning = result.get("winning_card") or {}
    return (
        f"{_title(result.get('winner'))} wins on {winning.get('card')} · joker {joker.get('card')}"
        f" · {result.get('cards_dealt')} cards"
    )


def _side_bet_city(game: str, result: Result) -> str:
    wins = [
        f"{name.split('_')[0]}-card {hand.get('hand')}"
        for name in ("three_card", "five_card", "seven_card")
        if isinstance(hand := result.get(name), Mapping) and hand.get("wins")
    ]
    return f"{_board(result)} · {', '.join(wins) or 'no winning hand'}"


def _speedy7(game: str, result: Result) -> str:
    counts = result.get("counts") or {}
    run = result.get("longest_run") or {}
    return (
        f"{' '.join(_cards(result))} · {counts.get('red', 0)} red {counts.get('black', 0)} black"
        f" · longest {run.get('colour')} {run.get('length')}"
    )


def _bet21(game: str, result: Result) -> str:
    def side(name: str) -> str:
        hand = result.get(name) or {}
        bust = " bust" if hand.get("bust") else ""
        return f"{name} {hand.get('points')}{bust} ({' '.join(_cards(hand))})"

    return f"{_title(result.get('winner'))} wins · {side('player1')} v {side('player2')}"


def _jokerbet(game: str, result: Result) -> str:
    if result.get("joker"):
        return f"joker {result.get('joker_colour') or ''}".rstrip()
    return f"{result.get('card')} {result.get('colour')}"


def _top_card(game: str, result: Result) -> str:
    dealer, player = _cards(result.get("dealer")), _cards(result.get("player"))
    winner = "Tie" if result.get("tie") else _title(result.get("winner"))
    war = f" war {result['war']}" if isinstance(result.get("war"), str) else ""
    return f"{winner}  dealer {' '.join(dealer)} v player {' '.join(player)}{war}"


def _red_dog(game: str, result: Result) -> str:
    cards = " ".join(str(result[k]) for k in ("first", "second", "third") if result.get(k))
    kind = str(result.get("kind")).replace("_", " ")
    if kind == "spread" and result.get("spread") is not None:
        kind = f"spread {result['spread']}"
    return f"{cards} · {kind} · {result.get('result')}"


def _draw_hi_lo(game: str, result: Result) -> str:
    tie = " (tie)" if result.get("tie") else ""
    return f"{result.get('base')} → {result.get('next')} {result.get('direction')}{tie}"


def _rock_paper_scissors(game: str, result: Result) -> str:
    gold, silver = result.get("gold") or {}, result.get("silver") or {}
    return f"gold {gold.get('symbol')} v silver {silver.get('symbol')}"


_CARD_GAMES: Final[Mapping[str, Summary]] = {
    "Baccarat": _baccarat,
    "GoldenWealthBaccarat": _baccarat,
    "LightningBaccarat": _baccarat,
    "DragonTiger": _dragon_tiger,
    "Blackjack": _blackjack,
    "BlackjackTurbo": _blackjack,
    "UltimateTexasHoldem": _poker_vs_dealer,
    "CasinoHoldem": _poker_vs_dealer,
    "TexasHoldemVsDealer": _poker_vs_dealer,
    "ThreeCardPoker": _poker_vs_dealer,
    "CaribbeanStud": _poker_vs_dealer,
    "CardPoker": _poker_vs_dealer,
    "BombayPoker": _poker_vs_dealer,
    "PokerRoom": _poker_room,
    "AndarBahar": _andar_bahar,
    "SideBetCity": _side_bet_city,
    "Speedy7": _speedy7,
    "Bet21": _bet21,
    "Jokerbet": _jokerbet,
    "TopCard": _top_card,
    "RedDog": _red_dog,
    "DrawHiLo": _draw_hi_lo,
    "RockPaperScissors": _rock_paper_scissors,
}
"""Card games by their class (:attr:`GameEntry.name`): one engine, many result shapes."""


# -- draws, wheels, dice, beads -------------------------------------------------------------------


def _draw(game: str, result: Result) -> str:
    balls = result.get("balls") or []
    text = _join(balls, 10)
    if result.get("bonus"):
        text += f" bonus {_join(result['bonus'], 3)}"
    if "match_class" in result:  # Fruitrace: the matches with the panel
        return f"{result.get('matches')} matches (class {result['match_class']}) · {text}"
    if "crashed" in result:  # Cash or Crash: the ladder
        end = "crashed" if result["crashed"] else "top" if result.get("top") else "stopped"
        return f"{end} at level {result.get('level')} · {text}"
    if len(balls) > 1 and result.get("sum") is not None:
        text += f" (sum {result['sum']})"
    return text


def _wheel(game: str, result: Result) -> str:
    text = str(result.get("segment"))
    if result.get("color"):
        text += f" {result['color']}"
    if result.get("kind") == "bonus":
        text += " (bonus)"
    multiplier = result.get("multiplier")
    if isinstance(multiplier, int) and multiplier > 1:
        text += f" x{multiplier}"
    rng = result.get("rng")
    if isinstance(rng, Mapping):
        hit = "hit" if rng.get("applies") else "missed"
        text += f" · {str(rng.get('kind')).replace('_', ' ')} {rng.get('segment')}"
        multiplier = rng.get("multiplier")
        text += f" x{multiplier} {hit}" if multiplier is not None else f" {hit}"
    bonus = result.get("bonus")
    if isinstance(bonus, Mapping):
        rolls = [r for r in bonus.get("rolls") or () if isinstance(r, Mapping)]
        dice = " ".join("+".join(str(d) for d in r.get("dice") or ()) for r in rolls)
        text += f" · rolls {dice or '-'} → square {bonus.get('position')}"
    spins = [s for s in result.get("spins") or () if isinstance(s, Mapping)]
    text += _turns(spins[-1].get("revolutions") if spins else result.get("revolutions"))
    respins = result.get("respins")
    if isinstance(respins, int) and respins:
        text += f" ({respins} respin{'s' if respins > 1 else ''})"
    return text


def _dice_line(dice: Sequence[Any], total: Any) -> str:
    return f"{'·'.join(str(d) for d in dice)} = {total}"


def _sic_bo(game: str, result: Result) -> str:
    text = _dice_line(result["dice"], result.get("total"))
    size = "big" if result.get("big") else "small" if result.get("small") else ""
    return f"{text} {'triple' if result.get('triple') else size}".rstrip()


def _craps(game: str, result: Result) -> str:
    dice = result["dice"]
    text = f"{'+'.join(str(d) for d in dice)}={result.get('total')}"
    point = result.get("point")
    text += f" point {point}" if point is not None else " come out"
    decision = result.get("decision")
    if decision is None:
        text += " (no decision)"
    else:
        text += f" ({str(decision).replace('_', ' ')})"
        if result.get("next_point") is not None and result.get("next_point") != point:
            text += f" → point {result['next_point']}"
    return text + (" hard" if result.get("hardway") else "")


def _dice_duel(game: str, result: Result) -> str:
    return f"red {result['red']} v blue {result['blue']} · {_title(result.get('winner'))}"


def _lightning_dice(game: str, result: Result) -> str:
    text = _dice_line(result["dice"], result.get("total"))
    if result.get("multiplier"):
        text += f" x{result['multiplier']}"
    return f"{text} · lightning {_picks(result.get('lightning')) or '-'}"


_DICE_GAMES: Final[Mapping[str, Summary]] = {
    "sic_bo": _sic_bo,
    "craps": _craps,
    "dice_duel": _dice_duel,
    "lightning_dice": _lightning_dice,
}


def _dice(game: str, result: Result) -> str:
    if game in _DICE_GAMES:
        return _DICE_GAMES[game](game, result)
    return _dice_line(result["dice"], result.get("total"))  # another preset: the dice


def _fan_tan(game: str, result: Result) -> str:
    size = "big" if result.get("big") else "small"
    parity = "odd" if result.get("odd") else "even"
    return f"{result.get('count')} beads → {result.get('beads')} {size} {parity}"


def _cards_family(game: str, result: Result) -> str:
    return _CARD_GAMES.get(CATALOG[game].name, _generic)(game, result)


def _generic(game: str, result: Result) -> str:
    return facts(result)


_FAMILIES: Final[Mapping[str, Summary]] = {
    "roulette": _roulette,
    "cards": _cards_family,
    "draw": _draw,
    "wheel": _wheel,
    "dice": _dice,
    "beads": _fan_tan,
}
"""Per engine family (:data:`~tablectl.controller.games.catalog.ENGINE_FAMILIES`)."""


def _summary_for(game: str) -> Summary:
    entry = CATALOG.get(game)
    if entry is None:
        return _generic
    return _FAMILIES.get(entry.family, _generic)


def clock_summary(body: Mapping[str, Any]) -> str:
    """One line for a ``clock_step`` or ``clock_confirmed`` alarm (docs/operations.md)."""
    if body.get("type") == "clock_confirmed":
        return f"clock confirmed by {body.get('by')} ({body.get('role')})"
    if body.get("suspect") is False:
        return f"clock returned to its course at {body.get('after')}"
    return f"clock stepped {body.get('step_s')} s: {body.get('before')} -> {body.get('after')}"

"""What the rule books fix about a game's equipment, held against a table's ``[rules]``.

Most parameters are the table's, but some are facts the book states (ball faces, panels, sectors,
a deck's cards); contradicting them would run another game under the book's name, so
:func:`tablectl.controller.engines.load_rules` refuses it as a config error (docs/verdicts.md,
"Config refused"; contracts §4.2). Only statements are checked: where the book is silent [GAP]
the table decides. Rule ids are seed-001's lines (``L2537``) unless another book is named."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from tablectl.controller.games import catalog

if TYPE_CHECKING:
    from tablectl.controller.games.draw import DrawRules
    from tablectl.controller.games.roulette import RouletteRules
    from tablectl.controller.games.wheel.rules import WheelRules

_RANKS: Final = "A23456789TJQK"


@dataclass(frozen=True, slots=True)
class Contradiction:
    """A ``[rules]`` value against a fact of the rule book: the key at fault, the rule it breaks
    and what the book says (with what the table has)."""

    key: str
    rule: str
    text: str

    def __str__(self) -> str:
        return f"rules.{self.key}: {self.rule}: {self.text}"


def _first(checks: Iterable[Callable[[], Contradiction | None]]) -> Contradiction | None:
    for check in checks:
        if (found := check()) is not None:
            return found
    return None


# -- card decks (seed-001 §3.0) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Deck:
    """What one deck of the game holds, by the rule book: its jokers and its ranks (four suits
    each). ``ranks = None``: the book does not state the ranks (the table's)."""

    rule: str
    jokers: int = 0
    ranks: str | None = _RANKS


_SEED001_JOKERS: Final = "seed-001 §3.0 (4)"
"""seed-001 §3.0 validator (4): "Jokers are allowed only in Poker with Joker and Jokerbet"."""

_DECKS: Final[Mapping[str, _Deck]] = {
    # seed-001 L1499 "8 decks with 52 cards"; seed-004 BAC 1.3.1 "52 cards without jokers".
    "baccarat": _Deck("seed-001 L1499, seed-004 BAC 1.3.1"),
    "golden_wealth_baccarat": _Deck("seed-001 L4007"),
    "lightning_baccarat": _Deck("seed-001 L4105"),
    # L1803 (dragon tiger), L1778 (football studio): decks of a shoe; L2619 (war of bets): "each
    # deck consists of 52 playing cards".
    "dragon_tiger": _Deck("seed-001 L1803, L1778, L2619"),
    # seed-001 L193 "8 card decks"; seed-000 BJ-E1 "six (6) decks (312 cards)"; seed-004 BJ 1.5
    # "52 cards, four suits, 2–10, J, Q, K, A".
    "blackjack": _Deck("seed-001 L193, seed-000 BJ-E1, seed-004 BJ 1.5"),
    "blackjack_turbo": _Deck("seed-001 L3073"),  # "6 deck of 52 cards with the Jokers removed"
    "bet21": _Deck("seed-001 L3499", ranks="6789TJQKA"),  # "36 cards … from Six to Ace"
    # seed-000 §5 PKH-01 "Poker games use a standard deck of 52 cards" (UTH, 3CP, Bombay Poker);
    # seed-001 L517–561 gives Three Card Poker / Teen Patti no deck (C41).
    "ultimate_texas_holdem": _Deck("seed-000 PKH-01"),
    "casino_holdem": _Deck("seed-001 L565"),  # "a 52-card deck including the ranks …"
    "texas_holdem": _Deck("seed-001 L621, L565"),
    "three_card_poker": _Deck("seed-000 PKH-01"),
    "teen_patti": _Deck("seed-000 PKH-01"),
    # Caribbean Stud: no deck in seed-001 §3.17 [GAP]; its model pins no jokers.
    "caribbean_stud": _Deck("seed-001 §3.17", ranks=None),
    "card_poker": _Deck("seed-001 L291"),  # "a 52-card deck including the ranks from 2 to Ace"
    "card_poker_exchange": _Deck("seed-001 L291 (L351: as card poker)"),
    "six_card_poker": _Deck("seed-001 L291 (C21: inherited)"),
    "poker_with_joker": _Deck("seed-001 L455", jokers=1),  # "a 53-card deck … and a Joker"
    "bombay_poker": _Deck("seed-000 PKH-01"),
    "andar_bahar": _Deck("seed-001 L3543"),  # "one deck consisting of 52 cards, from 2 to an Ace"
    "side_bet_city": _Deck("seed-001 L3423"),  # "one 52 card deck"
    "speedy7": _Deck("seed-001 L2515"),  # "52 cards deck"
    "jokerbet": _Deck("seed-001 L3157", jokers=2),  # "54 … cards … as well as two jokers"
    "top_card": _Deck("seed-001 L1599"),
    "red_dog": _Deck("seed-001 L1591"),
    "draw_hi_lo": _Deck("seed-001 L1595"),
    # A symbol deck (L2871): no ranks, no jokers.
    "rock_paper_scissors": _Deck("seed-001 L2871", ranks=None),
}
"""Every catalog card game's deck but the poker room's (seed-002 and seed-000 PR rules: a
standard deck its own model pins, PKH-01)."""


_CARD_POKER: Final = frozenset(
    {"card_poker", "card_poker_exchange", "six_card_poker", "poker_with_joker"}
)
"""One game class whose ``[rules] variant`` may name another member's deck (L455)."""


def _deck_of(game: str, rules: Mapping[str, Any]) -> _Deck | None:
    """The deck of ``game`` as configured (the card-poker family's by its variant)."""
    variant = rules.get("variant")
    if game in _CARD_POKER and isinstance(variant, str) and variant in _CARD_POKER:
        return _DECKS[variant]
    return _DECKS.get(game)


def deck_contradiction(game: str, rules: Mapping[str, Any]) -> Contradiction | None:
    """A card game's merged, unvalidated ``[rules]`` against its book's deck: jokers only in Poker
    with Joker (L455) and Jokerbet (L3157), seed-001 §3.0 validator (4); 21 Bet's deck is six to
    ace (L3499). Wrong types and games outside the catalog are left to others."""
    deck = _deck_of(game, rules)
    if deck is None:
        return None
    jokers = rules.get("jokers_per_deck")
    if isinstance(jokers, int) and not isinstance(jokers, bool) and 0 <= jokers != deck.jokers:
        if deck.jokers == 0:
            text = (
                f"{game} cannot play jokers: its decks hold none (jokers only in Poker with Joker,"
                f" L455, and Jokerbet, L3157), got {jokers} per deck"
            )
            return Contradiction("jokers_per_deck", f"{_SEED001_JOKERS}, {deck.rule}", text)
        text = f"{game}'s deck holds {deck.jokers} joker(s), got {jokers} per deck"
        return Contradiction("jokers_per_deck", deck.rule, text)
    ranks = rules.get("ranks")
    if deck.ranks is None or not isinstance(ranks, str) or set(ranks) == set(deck.ranks):
        return None
    missing = "".join(r for r in deck.ranks if r not in ranks)
    foreign = "".join(r for r in ranks if r not in deck.ranks)
    got = "; ".join(
        part
        for part in (f"no {missing}" if missing else "", f"{foreign} too" if foreign else "")
        if part
    )
    size = 4 * len(deck.ranks)
    text = f"{game}'s decks hold the {size} cards of the ranks {deck.ranks!r}"
    text += f", got {ranks!r} ({got})"
    return Contradiction("ranks", deck.rule, text)


# -- ball draws (seed-001 §6) ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Drum:
    """A drum by its rule book; ``None`` where the book does not say (Lucky 6/60's balls carry
    digits)."""

    rule: str
    balls: int
    draw: int | None
    lowest: int | None = 1
    bonus: tuple[int, int] = (0, 0)
    order: str | None = None
    colours: Mapping[str, int] | None = None
    required: bool = False
    exact: bool = False


_DRUMS: Final[Mapping[str, _Drum]] = {
    # L2123: "5 winning balls out of 36 (9 balls for each color: white, blue, green and red,
    # numbered from 1 to 36) … drawn into the cylinders … from left to right". Map not given.
    "lucky5": _Drum(
        "seed-001 L2123",
        36,
        5,
        order="position",
        colours={"white": 9, "blue": 9, "green": 9, "red": 9},
    ),
    # L2319: "7 winning balls out of 42 (21 balls for each black and yellow color, numbered from 1
    # to 42) … fall into the tube". Map not given (C38).
    "lucky7": _Drum("seed-001 L2319", 42, 7, order="read", colours={"black": 21, "yellow": 21}),
    # L2945–2963: 35 of 48, the colour of every number listed.
    "lucky6": _Drum("seed-001 L2945-2963", 48, 35, exact=True),
    # L2537: 6 of 60 digit balls, "30 balls are red and 30 balls are blue", zones A-2, B-2, C-2
    # from left to right (faces and sums: _lucky6_60).
    "lucky6_60": _Drum(
        "seed-001 L2537",
        60,
        6,
        lowest=None,
        order="position",
        colours={"red": 30, "blue": 30},
        required=True,
    ),
    # L4253: 35 of 48, "6 balls of each color - red, green, blue, purple, brown, yellow, orange
    # and black"; the map is not restated [GAP].
    "super_six": _Drum(
        "seed-001 L4253",
        48,
        35,
        colours=dict.fromkeys(
            ("red", "green", "blue", "purple", "brown", "yellow", "orange", "black"), 6
        ),
    ),
    # L4195: 6 of 49, "balls with odd numbers are white, balls with even numbers are pink".
    "mega6": _Drum("seed-001 L4195", 49, 6, exact=True),
    # L2859: "20 out of 1-51 numbered balls"; L2863: "one or two Mega Ball Bonus rounds".
    "mega_ball": _Drum("seed-001 L2859, L2863", 51, 20, bonus=(1, 2)),
    # L4575: 5 of 35; L4579: "The 6th ball falls out of the remaining 30 balls".
    "lotto_5_35": _Drum("seed-001 L4575, L4579", 35, 5, bonus=(1, 1)),
    "bingo37": _Drum("seed-001 L4587", 37, 1),  # "37 balls … numbered from 1 to 37 … one"
    "bingo38": _Drum("seed-001 L4615", 38, 1),
    # L3323–3325: one of 37 balls numbered 0 to 36, 18 red (listed), 18 black (listed), 0 green.
    "one_bet": _Drum("seed-001 L3323-3325", 37, 1, lowest=0, exact=True),
    "keno_express": _Drum("seed-001 L2101", 100, 1),  # "a number from 1 to 100"
    # L2907: "three blue …, three red …, three yellow …, and one orange ball", all in the tube.
    "fruitrace": _Drum(
        "seed-001 L2907",
        10,
        10,
        colours={"blue": 3, "red": 3, "yellow": 3, "orange": 1},
        required=True,
    ),
    # L4399: "19 green, 8 red and 1 golden ball"; the levels (draw) are not given [GAP].
    "cash_or_crash": _Drum(
        "seed-001 L4399",
        28,
        None,
        colours={"green": 19, "red": 8, "gold": 1},
        required=True,
    ),
}
"""Every ball-draw preset with a rule book (``keno`` has none: seed-001 names it only at L5)."""


def _sizes(sizes: Mapping[str, int]) -> str:
    return ", ".join(f"{n} {colour}" for colour, n in sizes.items())


def _drum_basics(variant: str, drum: _Drum, rules: DrawRules) -> Contradiction | None:
    """Balls, numbering, count, bonus balls and order."""
    drum_text = f"{variant} draws from {drum.balls} balls"
    if drum.lowest is not None:
        drum_text += f" numbered {drum.lowest} to {drum.lowest + drum.balls - 1}"
    if rules.balls != drum.balls:
        return Contradiction("balls", drum.rule, f"{drum_text}, got balls = {rules.balls}")
    if drum.lowest is not None and rules.lowest != drum.lowest:
        return Contradiction("lowest", drum.rule, f"{drum_text}, got lowest = {rules.lowest}")
    if drum.draw is not None and rules.draw != drum.draw:
        text = f"{variant}'s result is {drum.draw} ball(s), got draw = {rules.draw}"
        return Contradiction("draw", drum.rule, text)
    fewest = rules.bonus if rules.bonus_min is None else rules.bonus_min
    low, high = drum.bonus
    if fewest < low or rules.bonus > high:
        want = f"{low} to {high} bonus balls" if low < high else f"{high} bonus ball(s)"
        got = f"bonus = {rules.bonus}"
        if rules.bonus_min is not None:
            got += f", bonus_min = {rules.bonus_min}"
        key = "bonus_min" if rules.bonus_min is not None and rules.bonus <= high else "bonus"
        return Contradiction(key, drum.rule, f"{variant} draws {want}, got {got}")
    if drum.order is not None and rules.order != drum.order:
        reading = "by receiver position" if drum.order == "position" else "in the order read"
        text = f"{variant}'s balls are ordered {reading}, got order = {rules.order!r}"
        return Contradiction("order", drum.rule, text)
    return None


def _drum_colours(variant: str, drum: _Drum, rules: DrawRules) -> Contradiction | None:
    """The colour map: the book's own (exact), or its colours and their sizes."""
    colours = rules.colors
    if drum.exact:
        book: Mapping[str, Sequence[int]] = catalog.DRAW_PRESETS[variant]["colors"]
        mine = {ball: colour for colour, balls in (colours or {}).items() for ball in balls}
        for colour, balls in book.items():
            for ball in balls:
                if mine.get(ball) != colour:
                    got = mine.get(ball)
                    text = f"{variant}'s colours are fixed by number: ball {ball} is {colour}"
                    return Contradiction("colors", drum.rule, f"{text}, got {got}")
        return None
    if drum.colours is None:
        return None
    if colours is None:
        if not drum.required:
            return None
        sizes = _sizes(drum.colours)
        text = f"{variant} needs its colour map ({sizes} balls): the bets settle on it"
        return Contradiction("colors", drum.rule, text)
    have = {colour: len(balls) for colour, balls in colours.items() if balls}
    if have != dict(drum.colours):
        text = f"{variant} has {_sizes(drum.colours)} balls, got {_sizes(have)}"
        return Contradiction("colors", drum.rule, text)
    return None


_L6_RED_SUM: Final = 138
_L6_BLUE_SUM: Final = 132
_L6_SUM: Final = 270


def _lucky6_60(rules: DrawRules) -> Contradiction | None:
    """Lucky 6/60's balls (L2537): digits summing to 270, red 138, blue 132; bets 11–14 settle on
    the sums (L2561–2567)."""
    rule = "seed-001 L2537"
    if rules.zones != ["A", "B", "C"]:
        text = f"lucky6_60 drops its balls into zones A, B and C (two each), got {rules.zones}"
        return Contradiction("zones", rule, text)
    faces = rules.values or []
    if bad := [(i + rules.lowest, f) for i, f in enumerate(faces) if not 0 <= f <= 9]:
        ball, face = bad[0]
        text = f"lucky6_60's balls carry the digits 0 to 9, got {face} on ball {ball}"
        return Contradiction("values", rule, text)
    if sum(faces) != _L6_SUM:
        text = f"the faces of lucky6_60's 60 balls sum to {_L6_SUM}, got {sum(faces)}"
        return Contradiction("values", rule, text)
    colour_of = {ball: c for c, balls in (rules.colors or {}).items() for ball in balls}
    sums = Counter[str]()
    for i, face in enumerate(faces):
        sums[colour_of.get(i + rules.lowest, "")] += face
    if (sums["red"], sums["blue"]) != (_L6_RED_SUM, _L6_BLUE_SUM):
        text = (
            f"lucky6_60's red faces sum to {_L6_RED_SUM} and its blue faces to {_L6_BLUE_SUM}, "
            f"got red {sums['red']}, blue {sums['blue']}"
        )
        return Contradiction("colors", rule, text)
    return None


def _lucky6(rules: DrawRules) -> Contradiction | None:
    """Lucky 6/48's bets 31–32: "The total sum of the first 5 balls numbers" (L3031)."""
    if 5 not in rules.prefix_sums:
        text = "lucky6 settles bets on the sum of the first 5 balls"
        text += f", got prefix_sums = {rules.prefix_sums}"
        return Contradiction("prefix_sums", "seed-001 L3031", text)
    return None


def _fruitrace(rules: DrawRules) -> Contradiction | None:
    """Fruitrace's panel (L2907) and its wins (L2909)."""
    sizes = {"blue": 3, "red": 3, "yellow": 3, "orange": 1}
    panel = dict(Counter(rules.panel or ()))
    if panel != sizes:
        text = f"fruitrace's comparison panel shows {_sizes(sizes)}, got {_sizes(panel) or 'none'}"
        return Contradiction("panel", "seed-001 L2907", text)
    if rules.panel_solo != "orange":
        text = f'the "7" ball (orange) wins alone, got panel_solo = {rules.panel_solo!r}'
        return Contradiction("panel_solo", "seed-001 L2909", text)
    if rules.panel_min_matches != 4:
        text = f"fruitrace wins from 4 matches, got panel_min_matches = {rules.panel_min_matches}"
        return Contradiction("panel_min_matches", "seed-001 L2909", text)
    return None


def _cash_or_crash(rules: DrawRules) -> Contradiction | None:
    """The red ball ends the game (L4407); the golden one shields the next red (L4405)."""
    if rules.crash_color != "red":
        text = f"a red ball ends cash_or_crash, got crash_color = {rules.crash_color!r}"
        return Contradiction("crash_color", "seed-001 L4407", text)
    if rules.shield_color != "gold":
        text = f"the golden ball gives the shield, got shield_color = {rules.shield_color!r}"
        return Contradiction("shield_color", "seed-001 L4405", text)
    return None


_DRUM_EXTRAS: Final[Mapping[str, Callable[[DrawRules], Contradiction | None]]] = {
    "lucky6_60": _lucky6_60,
    "lucky6": _lucky6,
    "fruitrace": _fruitrace,
    "cash_or_crash": _cash_or_crash,
}


def _draw(rules: DrawRules) -> Contradiction | None:
    variant = rules.variant
    drum = _DRUMS.get(variant or "")
    if variant is None or drum is None:
        return None
    extra = _DRUM_EXTRAS.get(variant)
    return _first(
        (
            lambda: _drum_basics(variant, drum, rules),
            lambda: _drum_colours(variant, drum, rules),
            lambda: extra(rules) if extra is not None else None,
        )
    )


# -- money wheels (seed-001 §5) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Wheel:
    """A wheel by its rule book: its sectors (``counts``) or, where not given, size and labels."""

    rule: str
    counts: Mapping[str, int] | None = None
    size: int | None = None
    labels: frozenset[str] | None = None
    palette: frozenset[str] | None = None
    own_colour: bool = False


def _each_once(labels: Iterable[str]) -> dict[str, int]:
    return dict.fromkeys(labels, 1)


_ROULETTE_NUMBERS: Final = tuple(str(n) for n in range(37))
_WHEELS: Final[Mapping[str, _Wheel]] = {
    # L1750, L1758–1766: 54 segments, 23/15/7/4/2/1 numbers and the 2x and 7x multipliers; "a
    # unique colour for each number".
    "dream_catcher": _Wheel(
        "seed-001 L1750-1766",
        counts=catalog.WHEEL_PRESETS["dream_catcher"]["counts"],
        own_colour=True,
    ),
    # L2471: 19 sectors, 1 to 18 and a cup with a star; grey, red or black.
    "wheel_of_fortune": _Wheel(
        "seed-001 L2471",
        counts=_each_once([*(str(n) for n in range(1, 19)), "cup"]),
        palette=frozenset({"grey", "red", "black"}),
    ),
    # L2049: 21/13/7/4 numbers, 2 Cash Hunt, 2 Pachinko, 4 Coin Flip, 1 Crazy Time.
    "crazy_time": _Wheel("seed-001 L2049", counts=catalog.WHEEL_PRESETS["crazy_time"]["counts"]),
    # L1865, L1931–1940: 22/15/7/4 numbers, 2 Chance, 3 "2 rolls", 1 "4 rolls".
    "monopoly": _Wheel("seed-001 L1865", counts=catalog.WHEEL_PRESETS["monopoly"]["counts"]),
    # L3957: "54 colored sectors, which contain numbers: 1, 2, 5, 8, 10, 15, 20, 30 and 40".
    "mega_wheel": _Wheel(
        "seed-001 L3957",
        size=54,
        labels=frozenset({"1", "2", "5", "8", "10", "15", "20", "30", "40"}),
    ),
    # L4345: "38 equal sectors … numbered from 1 to 36, 0 and 00 (18 sectors are red, 18 sectors
    # are black, 0 and 00 sectors are green)".
    "wheelbet": _Wheel(
        "seed-001 L4345",
        counts=_each_once([*_ROULETTE_NUMBERS, "00"]),
        palette=frozenset({"red", "black", "green"}),
    ),
    # L3969: "segments numbered from 0 to 36"; L3975: "black, red or green".
    "spin_and_win": _Wheel(
        "seed-001 L3969, L3975",
        counts=_each_once(_ROULETTE_NUMBERS),
        palette=frozenset({"black", "red", "green"}),
    ),
    # L4337: "54 equal sectors … marked with numbers (2, 4, 6, 12, 16, 24, 48), each number has
    # its own color".
    "music_wheel": _Wheel(
        "seed-001 L4337",
        size=54,
        labels=frozenset({"2", "4", "6", "12", "16", "24", "48"}),
        own_colour=True,
    ),
}
"""Every money-wheel preset (all have a rule book)."""


def _layout(variant: str, wheel: _Wheel, rules: WheelRules) -> Contradiction | None:
    """The sectors: each label as often as the book says, or the book's size and labels."""
    have = Counter(rules.segments)
    if wheel.counts is not None:
        want = Counter(wheel.counts)
        if have != want:
            diff = ", ".join(
                f"{label} ×{have.get(label, 0)} (book {want.get(label, 0)})"
                for label in sorted(set(have) | set(want), key=_label_order)
                if have.get(label, 0) != want.get(label, 0)
            )
            text = f"{variant} has {want.total()} sectors, got {have.total()}: {diff}"
            return Contradiction("segments", wheel.rule, text)
        return None
    if wheel.size is not None and have.total() != wheel.size:
        text = f"{variant} has {wheel.size} sectors, got {have.total()}"
        return Contradiction("segments", wheel.rule, text)
    if wheel.labels is not None and set(have) != wheel.labels:
        shown = ", ".join(sorted(wheel.labels, key=_label_order))
        missing = sorted(wheel.labels - set(have), key=_label_order)
        got = ", ".join(sorted(have, key=_label_order))
        if missing:
            got += f" (no {', '.join(missing)})"
        text = f"{variant}'s sectors show the numbers {shown}, got {got}"
        return Contradiction("segments", wheel.rule, text)
    return None


def _label_order(label: str) -> tuple[int, int, str]:
    return (0, int(label), label) if label.isdigit() else (1, 0, label)


def _wheel_colours(variant: str, wheel: _Wheel, rules: WheelRules) -> Contradiction | None:
    """The colours, where the table maps them: the book's palette, a colour per number."""
    colours = rules.colors
    if colours is None:
        return None
    if wheel.palette is not None and (odd := sorted(set(colours.values()) - wheel.palette)):
        text = f"{variant}'s sectors are {', '.join(sorted(wheel.palette))}, got {', '.join(odd)}"
        return Contradiction("colors", wheel.rule, text)
    if wheel.own_colour:
        numbers = {label: c for label, c in colours.items() if label.isdigit()}
        shared = sorted(c for c, n in Counter(numbers.values()).items() if n > 1)
        if shared:
            text = f"each number of {variant} has a colour of its own"
            text += f", got {', '.join(shared)} twice"
            return Contradiction("colors", wheel.rule, text)
    return None


def _wheelbet(rules: WheelRules) -> Contradiction | None:
    """Wheelbet's colours (L4345: 18 red, 18 black, 0 and 00 green) and its number bets
    (L4349–4389: ranges, parity, rows; 0 and 00 neither even nor odd)."""
    colours = rules.colors or {}
    have = Counter(colours.get(label, "none") for label in rules.segments)
    green = {label for label in rules.segments if colours.get(label) == "green"}
    if have != Counter({"red": 18, "black": 18, "green": 2}) or green != {"0", "00"}:
        got = ", ".join(f"{n} {c}" for c, n in sorted(have.items()))
        text = f"wheelbet has 18 red, 18 black and 2 green sectors (0 and 00), got {got}"
        return Contradiction("colors", "seed-001 L4345", text)
    return _number_facts("wheelbet", rules, "seed-001 L4349-4389")


def _number_facts(variant: str, rules: WheelRules, rule: str) -> Contradiction | None:
    if not rules.number_facts:
        text = f"{variant}'s bets settle on the parity, range and row of the number"
        return Contradiction("number_facts", rule, f"{text}, got number_facts = false")
    return None


def _dream_catcher(rules: WheelRules) -> Contradiction | None:
    """The 2x and 7x segments multiply the next win by 2 and 7 (L1765–1766)."""
    if dict(rules.multipliers) != {"2x": 2, "7x": 7}:
        text = f"dream_catcher's 2x and 7x multiply by 2 and 7, got {dict(rules.multipliers)}"
        return Contradiction("multipliers", "seed-001 L1765-1766", text)
    return None


def _monopoly(rules: WheelRules) -> Contradiction | None:
    """Monopoly's bonus game: "2 rolls" and "4 rolls" start it, rolled twice or four times
    (L1893, L1897)."""
    want = {"2_rolls": 2, "4_rolls": 4}
    if set(rules.bonus) != set(want):
        text = f"monopoly's bonus game starts on 2_rolls and 4_rolls, got bonus = {rules.bonus}"
        return Contradiction("bonus", "seed-001 L1893", text)
    if dict(rules.bonus_rolls) != want:
        text = f"2_rolls gives 2 rolls and 4_rolls 4, got {dict(rules.bonus_rolls)}"
        return Contradiction("bonus_rolls", "seed-001 L1897", text)
    return None


def _crazy_time(rules: WheelRules) -> Contradiction | None:
    """The four bonus games: Cash Hunt, Pachinko, Coin Flip and Crazy Time (L2049, L2059–2095)."""
    want = {"cash_hunt", "pachinko", "coin_flip", "crazy_time"}
    if set(rules.bonus) != want:
        text = f"crazy_time's bonus segments are {', '.join(sorted(want))}, got {rules.bonus}"
        return Contradiction("bonus", "seed-001 L2049", text)
    return None


def _wheel_of_fortune(rules: WheelRules) -> Contradiction | None:
    """The 19-sector wheel: "The round is considered succeeded if the wheel made at least 3 full
    spins clockwise" (L2471); fewer turns than that would settle spins the book repeats."""
    if rules.min_revolutions < 3:
        text = "a spin counts after at least 3 full turns clockwise"
        text += f", got min_revolutions = {rules.min_revolutions}"
        return Contradiction("min_revolutions", "seed-001 L2471", text)
    return None


def _mega_wheel(rules: WheelRules) -> Contradiction | None:
    """The Mega Lucky Number is drawn every game (L3961), a Mega Win "with odds up to x500"
    (L3965)."""
    if rules.rng != "lucky_number":
        text = f'mega_wheel draws a Mega Lucky Number every game, got rng = "{rules.rng}"'
        return Contradiction("rng", "seed-001 L3961", text)
    if rules.rng_max_multiplier is not None and rules.rng_max_multiplier > 500:
        text = f"a Mega Win pays up to x500, got rng_max_multiplier = {rules.rng_max_multiplier}"
        return Contradiction("rng_max_multiplier", "seed-001 L3965", text)
    return None


def _music_wheel(rules: WheelRules) -> Contradiction | None:
    """The device on the wheel picks the bonus sector "After the betting round and before start of
    the spin" (L4339)."""
    if rules.rng != "bonus_sector" or rules.rng_before != "spin":
        text = (
            "music_wheel's device picks the bonus sector before the spin, got "
            f'rng = "{rules.rng}", rng_before = "{rules.rng_before}"'
        )
        key = "rng" if rules.rng != "bonus_sector" else "rng_before"
        return Contradiction(key, "seed-001 L4339", text)
    return None


_WHEEL_EXTRAS: Final[Mapping[str, Callable[[WheelRules], Contradiction | None]]] = {
    "dream_catcher": _dream_catcher,
    "monopoly": _monopoly,
    "crazy_time": _crazy_time,
    "wheel_of_fortune": _wheel_of_fortune,
    "mega_wheel": _mega_wheel,
    "music_wheel": _music_wheel,
    "wheelbet": _wheelbet,
    "spin_and_win": lambda rules: _number_facts("spin_and_win", rules, "seed-001 L3973-3979"),
}


def _own_wheel(variant: str, rules: WheelRules) -> bool:
    """A table with counts of its own runs another wheel (docs/games/wheels.md), which the book says
    nothing of."""
    book = catalog.WHEEL_PRESETS[variant].get("counts") or {}
    mine = {label: n for label, n in (rules.counts or {}).items() if n}
    return rules.counts is not None and mine != dict(book)


def _wheel(rules: WheelRules) -> Contradiction | None:
    variant = rules.variant
    wheel = _WHEELS.get(variant or "")
    if variant is None or wheel is None or _own_wheel(variant, rules):
        return None
    extra = _WHEEL_EXTRAS.get(variant)
    return _first(
        (
            lambda: _layout(variant, wheel, rules),
            lambda: _wheel_colours(variant, wheel, rules),
            lambda: extra(rules) if extra is not None else None,
        )
    )


# -- roulette (seed-001 §4, seed-000 §3) ----------------------------------------------------------


def _roulette(game: str, rules: RouletteRules) -> Contradiction | None:
    """One ball (L95), two in Double Ball Roulette (L119); lightning is Lightning Roulette's
    (L113–115; seed-000 §3 L245–265)."""
    if game == "double_ball_roulette" and rules.balls != 2:
        text = f"double_ball_roulette is played with two balls, got balls = {rules.balls}"
        return Contradiction("balls", "seed-001 L119", text)
    if game in ("roulette", "lightning_roulette") and rules.balls != 1:
        text = f"{game} is played with one ball (double_ball_roulette: two)"
        text += f", got balls = {rules.balls}"
        return Contradiction("balls", "seed-001 L95", text)
    if game == "lightning_roulette" and not rules.lightning:
        text = "lightning_roulette draws lightning numbers every spin, got lightning = false"
        return Contradiction("lightning", "seed-001 L113-115", text)
    if game == "roulette" and rules.lightning:
        text = 'lightning numbers are Lightning Roulette\'s (game = "lightning_roulette")'
        return Contradiction("lightning", "seed-001 L113-115", f"{text}, got lightning = true")
    return None


def contradiction(family: str, game: str, rules: Any) -> Contradiction | None:
    """The first fact ``rules`` contradict, or ``None``. Draws and wheels are held to the preset
    ``[rules] variant`` names (seed-001 C40), roulette to the game key."""
    if family == "draw":
        return _draw(rules)
    if family == "wheel":
        return _wheel(rules)
    if family == "roulette":
        return _roulette(game, rules)
    return None

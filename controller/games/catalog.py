"""The catalog: every ``[table] game`` key → its engine family, its rules, its preset.

The one list of games: the engine registry, the presets and the docs' game tables derive from
:data:`CATALOG` (a test holds the docs to it). Entries name their rules as strings (python-can's
``BACKENDS``), so importing the catalog imports no game. ``[rules] variant`` may pick another
preset of the family (seed-001 C40: two games are "LUCKY 6"). Sources per preset are in the
comments below."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Final, Literal, TypeAlias

Family: TypeAlias = Literal["roulette", "cards", "draw", "wheel", "dice", "beads"]

ENGINE_FAMILIES: Final[Mapping[Family, tuple[str, str]]] = MappingProxyType(
    {
        "roulette": ("tablectl.controller.engines.roulette", "RouletteEngine"),
        "cards": ("tablectl.controller.engines.cards", "CardEngine"),
        "draw": ("tablectl.controller.engines.draw", "DrawEngine"),
        "wheel": ("tablectl.controller.engines.wheel", "WheelEngine"),
        "dice": ("tablectl.controller.engines.dice", "DiceEngine"),
        "beads": ("tablectl.controller.engines.beads", "BeadEngine"),
    }
)
"""``family -> (module, class)`` of its engine."""


def _no_preset() -> Mapping[str, Any]:
    return MappingProxyType({})


@dataclass(frozen=True, slots=True)
class GameEntry:
    """One game of the catalog (see the module docstring)."""

    family: Family
    module: str
    name: str
    preset: Mapping[str, Any] = field(default_factory=_no_preset)
    variants: Mapping[str, Mapping[str, Any]] | None = None
    dealer_screen: bool = False
    """A card game worked through the dealer's screen (the house-banked poker and single-deck
    games of ``docs/card-games.md``; the game class's ``procedure``)."""
    doc: str | None = None
    """The page of ``docs/`` on its rules and outcome fields."""


def _frozen(presets: Mapping[str, dict[str, Any]]) -> Mapping[str, Mapping[str, Any]]:
    return MappingProxyType({name: MappingProxyType(params) for name, params in presets.items()})


# -- ball draws (seed-001 §6 ball drums, §10 parameter table) -------------------------------------


def _cycle_colors(names: Sequence[str], balls: int, lowest: int = 1) -> dict[str, list[int]]:
    """Colour by ``(n - lowest) mod len(names)`` (Lucky 6/48 L2945–2965; MEGA 6 by parity)."""
    return {
        name: list(range(lowest + i, lowest + balls, len(names))) for i, name in enumerate(names)
    }


# seed-001 L3325: 1 Bet's red set (the standard roulette red set), black the rest, 0 green.
_ONE_BET_RED: Final = (1, 3, 5, 7, 9, 12, 14, 16, 18, 19, 21, 23, 25, 27, 30, 32, 34, 36)
_EIGHT_COLOURS: Final = ("green", "blue", "red", "purple", "yellow", "orange", "brown", "black")

DRAW_PRESETS: Final = _frozen(
    {
        # §6.1 L2123: "5 winning balls out of 36 (9 balls for each color: white, blue, green and
        # red) … drawn into the cylinders. The order … is determined by the cylinders from left
        # to right". Colour map not given [GAP].
        "lucky5": {"balls": 36, "draw": 5, "order": "position"},
        # §6.2 L2319: "7 winning balls out of 42 (21 … black and yellow) … fall into the tube";
        # "more than 7 balls in the tube, the first 7 balls are counted, the other balls are
        # ignored". Colour map not given [GAP, C38].
        "lucky7": {"balls": 42, "draw": 7, "order": "read", "extras": "flag"},
        # §6.4 L2945–2965: 35 of 48, 8 colours by (n−1) mod 8; "sum of the first 5 balls" (L3031).
        "lucky6": {
            "balls": 48,
            "draw": 35,
            "colors": _cycle_colors(_EIGHT_COLOURS, 48),
            "prefix_sums": [5],
        },
        # §6.3 L2537: 6 of 60 digit balls in zones A-2, B-2, C-2 left to right. The digit (and
        # colour) of each physical ball is not given (C39): values are required config.
        "lucky6_60": {"balls": 60, "draw": 6, "order": "position", "zones": ["A", "B", "C"]},
        # §6.5 L4253: 35 of 48, 8 colours of 6; the map is probably §6.4's [GAP]; C27: the 122.5
        # sum bet read as the first-5 sum.
        "super_six": {
            "balls": 48,
            "draw": 35,
            "colors": _cycle_colors(_EIGHT_COLOURS, 48),
            "prefix_sums": [5],
        },
        # §6.6 L4195: 6 of 49, odd white, even pink, "displayed in the result tube".
        "mega6": {"balls": 49, "draw": 6, "colors": _cycle_colors(("white", "pink"), 49)},
        # §6.7 L2859, L2863: 20 of 51 "one after the other", then "one or two Mega Ball Bonus
        # rounds", each "A ball is drawn from the lottery drum" (from the remaining 31: [GAP], the
        # engine keeps every ball of a round distinct). The 5x–100x multiplier is RNG.
        "mega_ball": {"balls": 51, "draw": 20, "bonus": 2, "bonus_min": 1},
        # §6.8 L4575, L4579: 5 of 35, then "The 6th ball falls out of the remaining 30 balls".
        "lotto_5_35": {"balls": 35, "draw": 5, "bonus": 1},
        # §6.9 L4587: "37 balls … numbered from 1 to 37 … randomly selects one".
        "bingo37": {"balls": 37, "draw": 1},
        # §6.10 L4615: the same with 38 balls.
        "bingo38": {"balls": 38, "draw": 1},
        # §6.11 L3323–3325: one of 37 balls 0–36, returned after the round; roulette colours.
        "one_bet": {
            "balls": 37,
            "lowest": 0,
            "draw": 1,
            "colors": {
                "green": [0],
                "red": list(_ONE_BET_RED),
                "black": [n for n in range(1, 37) if n not in _ONE_BET_RED],
            },
        },
        # No rule-book source: seed-001 names "Keno" only at L5, among the "random number
        # generation based games", with no rules; seeds 000 and 002-004 have no keno. This is the
        # industry's classic keno, 20 of 80 (contracts §4.2's example "balls = 80, draw = 20").
        "keno": {"balls": 80, "draw": 20},
        # §6.14 L2101: one number 1–100 "drawn from the lottery drum" — but predetermined
        # "minimum 2 rounds in advance" (L2117, C30: RNG). For a table that does draw it.
        "keno_express": {"balls": 100, "draw": 1},
        # §6.12 L2907: 10 balls, "three blue balls with plums, three red balls with cherries,
        # three yellow balls with lemons, and one orange ball with the number 7", all into the
        # result tube; the result is the matches with the comparison panel (L2909–2927). The
        # panel's order is not given [GAP]: the book's listing order, to configure per studio.
        "fruitrace": {
            "balls": 10,
            "draw": 10,
            "colors": {"blue": [1, 2, 3], "red": [4, 5, 6], "yellow": [7, 8, 9], "orange": [10]},
            "panel": ["blue"] * 3 + ["red"] * 3 + ["yellow"] * 3 + ["orange"],
            "panel_solo": "orange",
        },
        # §6.13 L4399–4407: "19 green, 8 red and 1 golden ball", one at a time; green and golden
        # raise the blimp a level (20 levels: the top, when no raising ball is left), golden
        # shields the next red, an unshielded red ends the game. Levels and odds are not given;
        # whether balls return is not stated [GAP]: not returned within a round (the industry's).
        "cash_or_crash": {
            "balls": 28,
            "draw": 20,
            "colors": {"green": list(range(1, 20)), "red": list(range(20, 28)), "gold": [28]},
            "crash_color": "red",
            "shield_color": "gold",
        },
    }
)
"""Every ball-draw preset, as a ``[rules]`` mapping (``[rules] variant`` picks one)."""


# -- money wheels (seed-001 §5) -------------------------------------------------------------------


def spread(counts: Sequence[tuple[str, int]]) -> tuple[str, ...]:
    """A default order, each label spread evenly; deterministic. No real wheel's: the book gives
    none (§5.1 [GAP]), so a real table configures its ``segments``."""
    total = sum(c for _, c in counts)
    # Each label's segments sit one period (total / count) apart; the labels' phases differ, so
    # labels with the same count (Dream Catcher's 40, 2x and 7x) do not land side by side.
    phases = len(counts) + 1
    slots = sorted(
        ((k + (rank + 1) / phases) * total / c, rank, label)
        for rank, (label, c) in enumerate(counts)
        for k in range(c)
    )
    return tuple(label for _, _, label in slots)


_DREAM_CATCHER: Final = (
    ("1", 23), ("2", 15), ("5", 7), ("10", 4), ("20", 2), ("40", 1), ("2x", 1), ("7x", 1),
)  # fmt: skip
_MONOPOLY: Final = (
    ("1", 22), ("2", 15), ("5", 7), ("10", 4), ("chance", 2), ("2_rolls", 3), ("4_rolls", 1),
)  # fmt: skip
_CRAZY_TIME: Final = (
    ("1", 21), ("2", 13), ("5", 7), ("10", 4),
    ("cash_hunt", 2), ("pachinko", 2), ("coin_flip", 4), ("crazy_time", 1),
)  # fmt: skip
# Mega Wheel: the numbers are given (L3957), the counts are not [GAP]. This distribution (54) is
# an assumption to confirm against the studio's wheel; counts stay unchecked.
_MEGA_WHEEL: Final = (
    ("1", 20), ("2", 13), ("5", 7), ("8", 4), ("10", 4), ("15", 2), ("20", 2), ("30", 1), ("40", 1),
)  # fmt: skip
# Music Wheel: the numbers are given (L4337), the counts are not [GAP]. This distribution (54) is
# an assumption to confirm against the studio's wheel; counts stay unchecked.
_MUSIC_WHEEL: Final = (
    ("2", 20), ("4", 13), ("6", 9), ("12", 5), ("16", 3), ("24", 3), ("48", 1),
)  # fmt: skip
# Wheelbet (L4345) and Spin & Win (L3969) number their sectors like roulette wheels but give no
# order and no colour map [GAP]: the defaults are the roulette wheels' (the same data as
# games/roulette.py's AMERICAN_ORDER / EUROPEAN_ORDER and RED; a test holds them equal), an
# assumption a real table replaces with its own ``segments`` and ``colors``.
_AMERICAN_ORDER: Final = (
    "0", "28", "9", "26", "30", "11", "7", "20", "32", "17", "5", "22", "34", "15", "3", "24",
    "36", "13", "1", "00", "27", "10", "25", "29", "12", "8", "19", "31", "18", "6", "21", "33",
    "16", "4", "23", "35", "14", "2",
)  # fmt: skip
_EUROPEAN_ORDER: Final = (
    "0", "32", "15", "19", "4", "21", "2", "25", "17", "34", "6", "27", "13", "36", "11", "30",
    "8", "23", "10", "5", "24", "16", "33", "1", "20", "14", "31", "9", "22", "18", "29", "7",
    "28", "12", "35", "3", "26",
)  # fmt: skip


def _numbered(order: Sequence[str], **extra: Any) -> dict[str, Any]:
    """A wheel numbered like a roulette layout: each label once (the book's counts), roulette's
    colours (green zeros), and the number facts its bets settle on."""
    colors = {
        label: "green" if int(label) == 0 else "red" if int(label) in _ONE_BET_RED else "black"
        for label in order
    }
    return {
        "segments": list(order),
        "counts": dict.fromkeys(order, 1),
        "colors": colors,
        "number_facts": True,
        **extra,
    }


def _layout(
    counts: Sequence[tuple[str, int]], *, checked: bool = True, **extra: Any
) -> dict[str, Any]:
    """A wheel preset: the documented default order of ``counts`` (checked against them)."""
    params: dict[str, Any] = {"segments": list(spread(counts))}
    if checked:
        params["counts"] = dict(counts)
    params.update(extra)
    return params


WHEEL_PRESETS: Final = _frozen(
    {
        # §5.1 L1750–1768: 54 segments; 2x/7x chain spins; malfunction → void, bets returned.
        # min_revolutions 0: the book asks for no full turns (L1748–1768, §5.1 [GAP]).
        "dream_catcher": _layout(_DREAM_CATCHER, multipliers={"2x": 2, "7x": 7}, on_fault="void"),
        # §5.4 L2471: 19 sectors 1–18 + "cup with star" (order and colours not given, C37); "at
        # least 3 full spins clockwise", else the spin is repeated: the one wheel whose book asks
        # for full turns.
        "wheel_of_fortune": {
            "segments": [*(str(n) for n in range(1, 19)), "cup"],
            "counts": {**{str(n): 1 for n in range(1, 19)}, "cup": 1},
            "direction": "cw",
            "min_revolutions": 3,
        },
        # §5.3 L2049: 54 segments; four bonus games; malfunction → void (L2097). No turn count in
        # the book (L2047–2097). The Top Slot (L2051) is RNG shown on screen: a table it reports
        # to sets rng = "top_slot" (docs/games/wheels.md).
        "crazy_time": _layout(
            _CRAZY_TIME,
            bonus=["cash_hunt", "pachinko", "coin_flip", "crazy_time"],
            on_fault="void",
        ),
        # §5.2 L1865: 54 segments; Chance chains (card multiplier, L1875–1887; cash card: C25);
        # 2/4 rolls start the dice bonus (L1891), rolled 2 or 4 times (L1897); physical dice or
        # not is not stated [GAP]: a table with a dice reader sets dice_bonus = true. No
        # malfunction clause, no turn count (L1861–1940).
        "monopoly": _layout(
            _MONOPOLY,
            multipliers={"chance": 1},
            open_chain=["chance"],
            bonus=["2_rolls", "4_rolls"],
            bonus_rolls={"2_rolls": 2, "4_rolls": 4},
        ),
        # §5.5 L3955–3965: 54 sectors, numbers 1…40; the Mega Lucky Number is RNG, not the wheel's:
        # "one number is randomly selected … before the wheel stops" (L3959), "a Mega Win with
        # odds up to x500" (L3963). No clause on turns or faults.
        "mega_wheel": _layout(
            _MEGA_WHEEL,
            checked=False,
            rng="lucky_number",
            rng_before="stop",
            rng_max_multiplier=500,
        ),
        # §5.8 L4343–4395: 38 equal sectors 1–36, 0 and 00; 18 red, 18 black, 0 and 00 green
        # (L4345, checked); 20 bets on numbers, dozens, rows, colour and parity, 0 and 00 neither
        # even nor odd (L4349–4389). No clause on turns (L4345) or faults (§2.2).
        "wheelbet": _numbered(_AMERICAN_ORDER, color_counts={"red": 18, "black": 18, "green": 2}),
        # §5.6 L3967–3979: "segments numbered from 0 to 36", black, red or green, dozens, parity;
        # the pointer stops "after one spin" (no turn count). Physical or RNG unclear (§1: P?).
        "spin_and_win": _numbered(_EUROPEAN_ORDER),
        # §5.7 L4335–4341: 54 equal sectors 2, 4, 6, 12, 16, 24, 48 (counts not given); the
        # device on the wheel picks the bonus sector "After the betting round and before start of
        # the spin" (L4339): one for every sector of its number, for 16 and 48 "only for one
        # sector" (C26). "after the wheel stops completely" (L4337): no turn count; no fault clause.
        "music_wheel": _layout(
            _MUSIC_WHEEL,
            checked=False,
            rng="bonus_sector",
            rng_before="spin",
            rng_single=["16", "48"],
        ),
    }
)
"""Every money-wheel preset, as a ``[rules]`` mapping (``[rules] variant`` picks one)."""


# -- dice (seed-001 §7) ---------------------------------------------------------------------------

DICE_PRESETS: Final = _frozen(
    {
        # L5: named, no rules: the industry game (three dice in a shaker dome; Big/Small lose on a
        # triple). The shaker reports its start; a result within 3 s of it did not tumble [GAP].
        "sic_bo": {"dice": 3, "min_tumble_seconds": 3.0, "require_roll_started": True},
        # §7.2 L2747, L2757: two dice "thrown at the wall"; the point is carried between rolls. A
        # hand throw may not be seen starting: the tumble is timed when it is [GAP].
        "craps": {"dice": 2, "min_tumble_seconds": 1.0},
        # §7.1 L2683: a red and a blue die shaken in a cup and thrown [GAP: timing].
        "dice_duel": {"dice": 2, "colors": ["red", "blue"], "min_tumble_seconds": 1.0},
        # §7.3 L3069: three dice dropped through the tower after the lightning numbers are drawn;
        # the tower reports the drop [GAP: timing].
        "lightning_dice": {"dice": 3, "min_tumble_seconds": 2.0, "require_roll_started": True},
    }
)
"""Every dice preset, as a ``[rules]`` mapping (``docs/games/dice.md``)."""


# -- the catalog ----------------------------------------------------------------------------------

_CARDS: Final = "tablectl.controller.games.cards"


_DRAW: Final = GameEntry(
    "draw", "tablectl.controller.games.draw", "DrawRules", variants=DRAW_PRESETS, doc="verdicts.md"
)
_DRUM_GAMES: Final = GameEntry(
    "draw",
    "tablectl.controller.games.draw",
    "DrawRules",
    variants=DRAW_PRESETS,
    doc="games/drum_games.md",
)
"""The ball draws settled on a panel or a ladder (Fruitrace, Cash or Crash): their own page."""
_WHEEL: Final = GameEntry(
    "wheel",
    "tablectl.controller.games.wheel",
    "WheelRules",
    variants=WHEEL_PRESETS,
    doc="games/wheels.md",
)


_DICE: Final = GameEntry(
    "dice",
    "tablectl.controller.games.dice",
    "DiceRules",
    variants=DICE_PRESETS,
    doc="games/dice.md",
)


def _house(module: str, name: str, doc: str, **preset: Any) -> GameEntry:
    """A house-banked poker or single-deck card game (issue 8)."""
    return GameEntry(
        "cards",
        f"{_CARDS}.{module}",
        name,
        MappingProxyType(preset),
        dealer_screen=True,
        doc=f"games/{doc}.md",
    )


CATALOG: Final[Mapping[str, GameEntry]] = {
    "roulette": GameEntry(
        "roulette", "tablectl.controller.games.roulette", "RouletteRules", doc="games/roulette.md"
    ),
    # seed-001 §4.2 L113–115, seed-000 §4 L245–265: roulette plus the RNG's lightning numbers.
    "lightning_roulette": GameEntry(
        "roulette",
        "tablectl.controller.games.roulette",
        "RouletteRules",
        MappingProxyType({"lightning": True}),
        doc="games/roulette.md",
    ),
    # seed-001 §4.3 L117–177: two balls a spin.
    "double_ball_roulette": GameEntry(
        "roulette",
        "tablectl.controller.games.roulette",
        "RouletteRules",
        MappingProxyType({"balls": 2}),
        doc="games/roulette.md",
    ),
    # The shoe games (seed-000 §2, §4; seed-001 §3.1, §3.4, §3.6–3.8; seed-002-004 A.1, A.2).
    "baccarat": GameEntry("cards", f"{_CARDS}.baccarat", "Baccarat", doc="verdicts.md"),
    "dragon_tiger": GameEntry("cards", f"{_CARDS}.dragon_tiger", "DragonTiger", doc="verdicts.md"),
    "blackjack": GameEntry("cards", f"{_CARDS}.blackjack", "Blackjack", doc="verdicts.md"),
    # Their seed-001 variants: a shuffle before every game (§3.5 L3075); the RNG's multiplier
    # cards between the close of bets and the deal (§3.2 L4019–4025, §3.3 L4117–4123).
    "blackjack_turbo": GameEntry(
        "cards", f"{_CARDS}.blackjack_turbo", "BlackjackTurbo", doc="games/blackjack.md"
    ),
    "golden_wealth_baccarat": GameEntry(
        "cards", f"{_CARDS}.baccarat_rng", "GoldenWealthBaccarat", doc="games/baccarat.md"
    ),
    "lightning_baccarat": GameEntry(
        "cards", f"{_CARDS}.baccarat_rng", "LightningBaccarat", doc="games/baccarat.md"
    ),
    # Ball draws: one engine, a preset per rule-book game.
    **{game: _DRAW for game in DRAW_PRESETS if game != "lucky6_60"},
    # Money wheels: one engine, a preset (segment layout) per rule-book game.
    **{game: _WHEEL for game in WHEEL_PRESETS},
    # Dice (seed-001 §7; Sic Bo named at L5 only): one engine, a preset per game.
    **{game: _DICE for game in DICE_PRESETS},
    # Fruitrace and Cash or Crash (seed-001 §6.12, §6.13): ball draws with their own page.
    "fruitrace": _DRUM_GAMES,
    "cash_or_crash": _DRUM_GAMES,
    # Fan Tan (seed-001 §8.1 L3981–4003): a bead count, a family of its own.
    "fan_tan": GameEntry(
        "beads", "tablectl.controller.games.fan_tan", "FanTanRules", doc="games/fan_tan.md"
    ),
    # Community-card poker against the dealer (seed-000 §6, seed-001 §3.14–3.15).
    "ultimate_texas_holdem": _house("holdem", "UltimateTexasHoldem", "holdem"),
    "casino_holdem": _house("holdem", "CasinoHoldem", "holdem"),
    "texas_holdem": _house("holdem", "TexasHoldemVsDealer", "holdem"),
    # Three-card and five-card stud against the dealer (seed-000 §7, seed-001 §3.13, §3.17).
    "three_card_poker": _house("stud", "ThreeCardPoker", "stud"),
    "teen_patti": _house("stud", "ThreeCardPoker", "stud", ranking="teen_patti"),
    "caribbean_stud": _house("stud", "CaribbeanStud", "stud"),
    # The "card poker" family with exchanges and the sixth card (seed-000 §8, seed-001 §3.9–3.12).
    "card_poker": _house("card_poker", "CardPoker", "card_poker", variant="card_poker"),
    "card_poker_exchange": _house(
        "card_poker", "CardPoker", "card_poker", variant="card_poker_exchange"
    ),
    "six_card_poker": _house("card_poker", "CardPoker", "card_poker", variant="six_card_poker"),
    "poker_with_joker": _house("card_poker", "CardPoker", "card_poker", variant="poker_with_joker"),
    "bombay_poker": _house("card_poker", "BombayPoker", "card_poker"),
    # Card sequences (seed-001 §3.8a, §3.18, §3.19).
    "andar_bahar": _house("sequences", "AndarBahar", "sequences"),
    "side_bet_city": _house("sequences", "SideBetCity", "sequences"),
    "speedy7": _house("sequences", "Speedy7", "sequences"),
    # One card against another, a card a round, 21 with two hands (seed-001 §3.20, §3.21, §3.23).
    "bet21": _house("single_card", "Bet21", "single_card"),
    "jokerbet": _house("single_card", "Jokerbet", "single_card"),
    "top_card": _house("single_card", "TopCard", "single_card"),
    # Player-versus-player poker: the dealer assist of a poker room's Hold'em and Omaha ring games
    # (seed-002 G 33, seed-000 PR-8): flags, no bank.
    "poker_room_holdem": _house("poker_room", "PokerRoom", "poker_room", hole_cards=2),
    "poker_room_omaha": _house("poker_room", "PokerRoom", "poker_room", hole_cards=4),
    # The other "Deal button" games and the symbol deck (seed-001 §3.24, §3.25, §3.22).
    "red_dog": _house("single_card", "RedDog", "single_card"),
    "draw_hi_lo": _house("single_card", "DrawHiLo", "single_card"),
    "rock_paper_scissors": _house("single_card", "RockPaperScissors", "single_card"),
}
"""``[table] game`` → its :class:`GameEntry`."""

GAMES: Final[Mapping[str, GameEntry]] = MappingProxyType(
    {game: entry for game, entry in CATALOG.items() if entry.dealer_screen}
)
"""The house-banked poker and single-deck card games (``docs/card-games.md``; the lab's scripted
tables)."""

"""``diag stats`` for card tables: shuffle randomness from the journal (regulatory R5, R17).

*The* R5 test is rank by position (χ² at α = 0.05, summed over the positions); the supplementary
tests (single positions, suits, the first card, serial correlation, repetition, baccarat-family
results) each run at α/k (Bonferroni), so together they flag a fair shuffler about α of the time.
A flag means "look again with another window", not "the shuffle is biased".
"""

from __future__ import annotations

import itertools
import math
import statistics as stdstats
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.games.catalog import CATALOG
from tablectl.controller.tools.diag.stats.maths import (
    FrequencyTest,
    PositionTest,
    RepetitionTest,
    SerialCorrelation,
    frequency_test,
    pooled_serial_correlation,
    position_test,
    repetition_test,
)
from tablectl.controller.tools.diag.stats.shoes import Shoe, ShoeWindow
from tablectl.drivers.cards import RANKS, SUITS, parse_card

SHORT_DECK_GAMES: Final = frozenset({"bet21"})
"""Card games whose decks lack ranks (21 Bet: 36 cards, six to ace), left out of
:data:`CARD_GAMES`: every rank and first-card test here expects each of the 13 ranks at
probability 1/13, so such a shoe would be flagged whatever its shuffle. Hand-kept because the
catalog names a game's rules without importing them (a deck's ranks are in its rules model);
a test holds it to the rules."""

CARD_GAMES: Final = (
    frozenset(game for game, entry in CATALOG.items() if entry.family == "cards") - SHORT_DECK_GAMES
)
"""The ``[table] game`` values that get shuffle statistics: every game of the catalog played on
the card engine (each shuffles a shoe or deck and journals it as described in
:mod:`~tablectl.controller.tools.diag.stats.shoes`), except :data:`SHORT_DECK_GAMES`."""

BACCARAT_PROBABILITIES: Final[Mapping[str, float]] = {
    "banker": 0.458597,
    "player": 0.446247,
    "tie": 0.095156,
}
"""Eight decks, the standard tableau (Wizard of Odds); six decks: 0.458653, 0.446279, 0.095069."""

MIN_SHOES: Final = 5
"""Fewer shoes than this and the per-position and first-card tests are not run."""

MIN_EXPECTED: Final = 5.0
"""A χ² over results needs at least this many expected in its rarest category (a tie); a σ flag
needs this many expected in its own category."""

_RANK_VALUE: Final = {rank: i + 1 for i, rank in enumerate(RANKS)}


# --- results ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ResultModel:
    """The theoretical result probabilities of a game, and where they come from."""

    label: str
    probabilities: Mapping[str, float]


def result_model(
    game: str, rules: Mapping[str, Any], winners: Sequence[str] = ()
) -> ResultModel | None:
    """The winners' probabilities for ``game`` (``None``: blackjack, whose results depend on the
    players' decisions). For the dragon tiger family the variant comes from ``rules`` or, with
    no config, from the winners the journal holds."""
    if game == "baccarat":
        return ResultModel("baccarat, 8-deck probabilities", BACCARAT_PROBABILITIES)
    if game != "dragon_tiger":
        return None
    from tablectl.controller.games.cards.dragon_tiger import PRESETS  # noqa: PLC0415 - only for this game

    configured_variant = rules.get("variant")
    seen = set(winners)
    candidates = [v for v in PRESETS if v == configured_variant] or [
        v for v, p in PRESETS.items() if seen <= {*p.positions, p.tie}
    ]
    name = candidates[0] if candidates else "dragon_tiger"
    preset = PRESETS[name]
    configured = rules.get("decks")
    decks = configured if isinstance(configured, int) and configured > 0 else preset.decks
    # Equal ranks: the second card matches the first's rank among the 52d − 1 cards left.
    tie = (4 * decks - 1) / (52 * decks - 1)
    first, second = preset.positions
    return ResultModel(
        f"{name}, {decks} decks",
        {first: (1 - tie) / 2, second: (1 - tie) / 2, preset.tie: tie},
    )


# --- the report ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class ShuffleReport:
    """Everything ``diag stats`` says about a window of shoes. A test is ``None`` when the
    window is too small for it (``notes`` say why)."""

    shoes: int
    cards: int
    unreadable: int
    jokers: int
    lengths: tuple[int, float, int] | None
    """Cards per shoe: least, median, most."""
    alpha: float
    """The R5 test's risk level."""
    supplementary_alpha: float
    """Each supplementary test's: ``alpha`` over their number (Bonferroni)."""
    sigma: float
    rank_by_position: PositionTest | None = None
    suit_by_position: PositionTest | None = None
    first_rank: FrequencyTest | None = None
    first_suit: FrequencyTest | None = None
    serial: SerialCorrelation | None = None
    repetition: RepetitionTest | None = None
    results: FrequencyTest | None = None
    results_label: str | None = None
    notes: tuple[str, ...] = ()

    @property
    def tests(self) -> dict[str, bool]:
        """Each test that ran → whether it is flagged; ``rank_by_position`` is R5's."""
        ran: dict[str, bool] = {}
        rank, suit = self.rank_by_position, self.suit_by_position
        if rank is not None and rank.positions > 0:
            ran["rank_by_position"] = rank.sum_flagged
            ran["rank_position_outliers"] = bool(rank.outliers)
        if suit is not None and suit.positions > 0:
            ran["suit_by_position"] = suit.sum_flagged
            ran["suit_position_outliers"] = bool(suit.outliers)
        for name, test in (
            ("first_card_rank", self.first_rank),
            ("first_card_suit", self.first_suit),
            ("serial_correlation", self.serial),
            ("repetition", self.repetition),
            ("results", self.results),
        ):
            if test is not None:
                ran[name] = test.flagged
        return ran

    @property
    def flagged(self) -> bool:
        return any(self.tests.values())


def _ranks_suits(code: str) -> tuple[str, str] | None:
    """``(rank, suit)`` of a card code; ``("JK", "")`` for a joker; ``None`` for no card."""
    try:
        card = parse_card(code)
    except ValueError:
        return None
    return card.rank, card.suit


def shuffle_report(
    window: ShoeWindow,
    *,
    model: ResultModel | None = None,
    alpha: float = 0.05,
    sigma: float = 3.0,
) -> ShuffleReport:
    """Run every test the window is large enough for (see the module docstring)."""
    shoes = window.shoes
    notes: list[str] = []
    parsed = [[_ranks_suits(code) for code in shoe.cards] for shoe in shoes]
    unreadable = sum(card is None for shoe in parsed for card in shoe)
    jokers = sum(card is not None and card[0] == "JK" for shoe in parsed for card in shoe)
    lengths = [len(shoe.cards) for shoe in shoes]
    report_lengths = (min(lengths), stdstats.median(lengths), max(lengths)) if lengths else None

    # The supplementary family: rank outliers, suit by position, suit outliers, first rank,
    # first suit, serial correlation, repetition (and results where the game has a model).
    each = alpha / (7 + (model is not None))
    positions: dict[str, PositionTest | None] = {"rank": None, "suit": None}
    first: dict[str, FrequencyTest | None] = {"rank": None, "suit": None}
    if len(shoes) >= MIN_SHOES:
        rank_columns, suit_columns = _columns(parsed)
        min_shoes = max(2, math.ceil(len(shoes) / 2))
        positions["rank"] = position_test(
            rank_columns, RANKS, min_shoes=min_shoes, alpha=alpha, outlier_alpha=each
        )
        positions["suit"] = position_test(suit_columns, SUITS, min_shoes=min_shoes, alpha=each)
        heads = [shoe[0] for shoe in parsed if shoe and shoe[0] is not None and shoe[0][0] != "JK"]
        first["rank"] = frequency_test(
            Counter(card[0] for card in heads),
            dict.fromkeys(RANKS, 1 / len(RANKS)),
            alpha=each,
            sigma=sigma,
            sigma_min_expected=MIN_EXPECTED,
        )
        first["suit"] = frequency_test(
            Counter(card[1] for card in heads),
            dict.fromkeys(SUITS, 1 / len(SUITS)),
            alpha=each,
            sigma=sigma,
            sigma_min_expected=MIN_EXPECTED,
        )
    else:
        notes.append(
            f"{len(shoes)} shoe(s): the position and first-card tests need at least {MIN_SHOES}"
        )

    serial = pooled_serial_correlation(_rank_runs(parsed), alpha=each)
    repetition = _repetition(shoes, each)
    if repetition is None and len(shoes) >= 2:
        notes.append("too few positions to compare shoe with shoe")

    results: FrequencyTest | None = None
    if model is not None:
        winners = Counter(w for shoe in shoes for w in shoe.results)
        n = sum(winners[w] for w in model.probabilities)
        need = math.ceil(MIN_EXPECTED / min(model.probabilities.values()))
        if n >= need:
            results = frequency_test(
                winners,
                model.probabilities,
                alpha=each,
                sigma=sigma,
                sigma_min_expected=MIN_EXPECTED,
            )
        else:
            notes.append(f"{n} settled rounds: the results test needs at least {need}")
    return ShuffleReport(
        shoes=len(shoes),
        cards=sum(lengths),
        unreadable=unreadable,
        jokers=jokers,
        lengths=report_lengths,
        alpha=alpha,
        supplementary_alpha=each,
        sigma=sigma,
        rank_by_position=positions["rank"],
        suit_by_position=positions["suit"],
        first_rank=first["rank"],
        first_suit=first["suit"],
        serial=serial,
        repetition=repetition,
        results=results,
        results_label=model.label if model is not None else None,
        notes=tuple(notes),
    )


def _columns(
    parsed: Sequence[Sequence[tuple[str, str] | None]],
) -> tuple[list[list[int]], list[list[int]]]:
    """Per position, how many shoes had each rank and each suit there."""
    longest = max((len(shoe) for shoe in parsed), default=0)
    ranks = [[0] * len(RANKS) for _ in range(longest)]
    suits = [[0] * len(SUITS) for _ in range(longest)]
    for shoe in parsed:
        for position, card in enumerate(shoe):
            if card is None or card[0] == "JK":
                continue
            ranks[position][RANKS.index(card[0])] += 1
            suits[position][SUITS.index(card[1])] += 1
    return ranks, suits


def _rank_runs(parsed: Sequence[Sequence[tuple[str, str] | None]]) -> list[list[float]]:
    """Ranks (A = 1 … K = 13) in deal order, cut at jokers and unreadable codes (whatever was
    between two cards is unknown, so they are not neighbours)."""
    runs: list[list[float]] = []
    for shoe in parsed:
        run: list[float] = []
        for card in shoe:
            if card is None or card[0] == "JK":
                if run:
                    runs.append(run)
                run = []
            else:
                run.append(_RANK_VALUE[card[0]])
        if run:
            runs.append(run)
    return runs


def _canonical(code: str) -> str | None:
    try:
        return parse_card(code).code
    except ValueError:
        return None


def _repetition(shoes: Sequence[Shoe], alpha: float) -> RepetitionTest | None:
    canonical = [[_canonical(code) for code in shoe.cards] for shoe in shoes]
    composition = Counter(code for shoe in canonical for code in shoe if code is not None)
    total = sum(composition.values())
    if total == 0:
        return None
    rate = sum((n / total) ** 2 for n in composition.values())
    matches = compared = 0
    for before, after in itertools.pairwise(canonical):
        for a, b in zip(before, after, strict=False):
            if a is not None and b is not None:
                compared += 1
                matches += a == b
    return repetition_test(matches, compared, rate, alpha=alpha)

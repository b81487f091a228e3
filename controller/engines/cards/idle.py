"""Cards read with no round in progress (seed-000 BAC-I1, BAC-I2, BAC-I3; blackjack BJ-I1).

Each is carried into the next round ("all cards are played"); a ``no_bets_deal`` game plays them
as a coup without bets (BAC-I3), reported as ``no_action_coup`` and never settled: no round was
opened, so nothing may be paid. Pure."""

from __future__ import annotations

from tablectl.controller.engines.cards.phases import (
    COUP_ABANDONED,
    DEAL_WITHOUT_BETS,
    EXTRA_CARD,
    NO_ACTION_COUP,
)
from tablectl.controller.engines.cards.round import ScriptRound
from tablectl.controller.games.cards.deal import BaseGame
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card


class IdleCards:
    """The carried cards and the coup without bets of one table (see the module docstring)."""

    def __init__(self, game: BaseGame) -> None:
        self._game = game
        self.carried: list[Card] = []
        self.no_bets: ScriptRound | None = None

    def carry(self, card: Card) -> Finding:
        """``card`` was not called for: it is the next round's first card."""
        self.carried.append(card)
        rule = "BAC-I2" if self._game.no_bets_deal else "BJ-I1"
        return Finding(
            EXTRA_CARD,
            rule,
            f"{card.code} was not called for: it is the first card of the next coup",
        )

    def card(self, card: Card) -> tuple[list[Finding], bool]:
        """A card read between rounds: what it shows, and whether it completed a coup without
        bets (one more coup of the shoe is over then)."""
        if card.is_joker:
            return [], False
        if self.no_bets is not None:
            self.no_bets.place(card)
            return self._finished()
        if self.carried and self._game.no_bets_deal:
            # BAC-I3: cards dealt with no bets in the boxes; the deal is played to the end.
            model = ScriptRound(self._game, None)
            self.no_bets = model
            self.carried.append(card)
            while self.carried and model.expects_card():
                model.place(self.carried.pop(0))
            started = Finding(
                DEAL_WITHOUT_BETS,
                "BAC-I3",
                "cards dealt with no round open: the coup is played to the end without bets",
            )
            found, done = self._finished()
            return [started, *found], done
        return [self.carry(card)], False

    def _finished(self) -> tuple[list[Finding], bool]:
        model = self.no_bets
        assert model is not None
        if not model.complete():
            return [], False
        self.no_bets = None
        message = "coup dealt without bets completed (no action)"
        return [Finding(NO_ACTION_COUP, "BAC-I3", message, {"result": model.result()})], True

    def next_for(self, model: ScriptRound) -> Card | None:
        """The carried card the round just begun takes next (BAC-I1/I2, BJ-I1), if any."""
        if self.carried and model.expects_card():
            return self.carried.pop(0)
        return None

    def abandon(self) -> Finding | None:
        """A round opens: a coup without bets left unfinished is abandoned."""
        if self.no_bets is None:
            return None
        self.no_bets = None
        return Finding(
            COUP_ABANDONED,
            "BAC-I3",
            "a deal without bets was left unfinished; its cards stay counted",
        )

    def forget(self) -> None:
        """A new shoe is coming: whatever the old one left outside a round is gone."""
        self.carried = []
        self.no_bets = None

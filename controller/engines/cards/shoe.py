"""The life of a card table's shoe, as the card engine tracks it beside the round.

``state`` is a strict machine (validated at import): ``unknown`` (a stream that began mid-shoe,
contracts §4.4), ``ready`` (reconciled, R6), ``rejected`` (R6: the deck is removed), ``ended``
(the cut card's last coup, seed-002-004 BAC 3.2.2 / 3.5.4, a per-round deck, or empty). Pure."""

from __future__ import annotations

from typing import Any, Final

from tablectl.controller.core.outcomes import ShoeReport
from tablectl.controller.core.statemachine import MachineDefinition, StateMachine, Transition
from tablectl.controller.games.cards import shoe as shoe_rules
from tablectl.controller.games.cards.shoe import Burn, Shoe, ShoeRules, check_cut_card
from tablectl.controller.games.findings import Finding
from tablectl.drivers.cards import Card

UNKNOWN: Final = "unknown"
READY: Final = "ready"
REJECTED: Final = "rejected"
ENDED: Final = "ended"


def _shoe_machine() -> MachineDefinition:
    every = (UNKNOWN, READY, REJECTED, ENDED)
    t = [Transition(state, "shuffled", READY) for state in every]
    t += [Transition(state, "rejected", REJECTED) for state in every]
    t += [Transition(state, "emptied", ENDED) for state in every]
    # A round or a coup ends the shoe: rounds are dealt from a ready, an unknown (mid-shoe) or an
    # emptied shoe (the coup that ran out is finished by hand), never from a rejected one.
    t += [Transition(state, "last_coup", ENDED) for state in (UNKNOWN, READY, ENDED)]
    t.append(Transition(READY, "burn_done", READY))
    return MachineDefinition("shoe", states=every, initial=UNKNOWN, transitions=t)


SHOE_MACHINE: Final = _shoe_machine()
"""Built (and so validated) at import."""


class ShoeLife:
    """The shoe in use and its history. ``coups_per_shoe``: rounds before a shuffle (``None``: to
    the cut card); ``unique_barcodes``: war of bets."""

    def __init__(
        self,
        rules: ShoeRules,
        *,
        coups_per_shoe: int | None,
        unique_barcodes: bool,
        symbols: int = 0,
        composition_rule: str = shoe_rules.COMPOSITION_RULE,
    ) -> None:
        self._rules = rules
        self._coups_per_shoe = coups_per_shoe
        self._unique_barcodes = unique_barcodes
        self._symbols = symbols
        self._composition_rule = composition_rule
        self._machine = StateMachine(SHOE_MACHINE)
        self.shoe = self._new_shoe(known=False, counted=None)
        self.burn: Burn | None = None
        self.cut_card = False
        self.coups_left: int | None = coups_per_shoe
        self.rounds = 0
        """Rounds opened in this shoe (reported at its end)."""
        self._barcodes: set[str] = set()

    @property
    def state(self) -> str:
        return self._machine.state

    @property
    def burn_hidden(self) -> bool:
        """Whether the next card is burned unseen (the burn's first card is shown)."""
        return self.burn is not None and self.burn.shown is not None

    @property
    def last_coup(self) -> bool:
        """Whether the round ending now is the shoe's last."""
        return self.coups_left is not None and self.coups_left <= 1

    def deal(self, card: Card, barcode: str | None) -> list[Finding]:
        """Count ``card`` out of the shoe; the findings of what it proves."""
        findings: list[Finding] = []
        found = self.shoe.deal(card)
        if found is not None:
            findings.append(found)
        if self._unique_barcodes and barcode is not None:
            if barcode in self._barcodes:
                findings.append(
                    Finding(
                        shoe_rules.DUPLICATE_BARCODE,
                        "seed-001 §3.8",
                        f"barcode {barcode!r} was already read in this shoe",
                        severity="hold",
                    )
                )
            self._barcodes.add(barcode)
        return findings

    def take_burn(self, card: Card) -> bool:
        """Feed the burn; ``True`` once it is complete (the shoe stays ready)."""
        assert self.burn is not None
        if self.burn.take(card):
            self._machine.fire("burn_done")
            return True
        return False

    def accept_burn(self) -> None:
        """A supervisor accepts the burn as done (e.g. burned cards were not scanned)."""
        self._machine.fire("burn_done")

    def cut(self) -> Finding | None:
        """The cut card is out: the coup in progress (or the next one, if none) is the last,
        plus one with ``last_coup = "next"``; a finding when it came out too deep."""
        self.cut_card = True
        self.coups_left = 1 + (1 if self._rules.last_coup == "next" else 0)
        return check_cut_card(self.shoe, self._rules.cut_card_min_behind)

    def forget(self) -> None:
        """A new shoe is coming: the old one's cut card, coups, barcodes and burn are gone."""
        self.cut_card = False
        self.coups_left = None
        self._barcodes = set()
        self.burn = None
        self.rounds = 0

    def rejected(self) -> None:
        self._machine.fire("rejected")

    def _new_shoe(self, *, known: bool, counted: int | None) -> Shoe:
        rules = self._rules
        return Shoe(
            rules.decks,
            jokers_per_deck=rules.jokers_per_deck,
            known=known,
            counted=counted,
            ranks=rules.ranks,
            symbols=self._symbols,
            composition_rule=self._composition_rule,
        )

    def loaded(self, counted: int) -> None:
        """A shuffle the shuffler reconciled: a new shoe of ``counted`` cards (R6)."""
        rules = self._rules
        self.shoe = self._new_shoe(known=True, counted=counted)
        self.burn = Burn() if rules.burn else None
        self._machine.fire("shuffled")
        self.coups_left = self._coups_per_shoe

    def emptied(self, *, in_round: bool, ts: str | None) -> tuple[Finding | None, ShoeReport]:
        """The shoe reports no card left: the R6 cross-check, and the shoe's report. The round
        in progress (if any) is its last."""
        shoe = self.shoe
        finding = shoe.empty()
        report = ShoeReport(
            cards_read=shoe.dealt,
            expected=shoe.counted if shoe.counted is not None else shoe.size,
            shuffler_count=shoe.counted,
            reconciled=(finding is None) if shoe.known else None,
            rounds=self.rounds,
            ts=ts,
        )
        self._machine.fire("emptied")
        self.coups_left = 1 if in_round else 0
        return finding, report

    def count_down(self) -> bool:
        """One more coup of the shoe is over; whether it was the last."""
        if self.coups_left is None:
            return False
        self.coups_left = max(self.coups_left - 1, 0)
        return self.coups_left == 0

    def round_over(self) -> None:
        """A round of this shoe ended: the shoe ends with its last."""
        if self.count_down():
            self._machine.fire("last_coup")

    def summary(self) -> dict[str, Any]:
        """The snapshot's ``shoe``: counters only, never the order of undealt cards."""
        shoe = self.shoe
        return {
            "state": self.state,
            "decks": shoe.decks,
            "size": shoe.size,
            "dealt": shoe.dealt,
            "remaining": shoe.remaining if shoe.known else None,
            "shuffler_count": shoe.counted,
            "cut_card_seen": self.cut_card,
            "coups_left": self.coups_left,
            "burn": None if self.burn is None else self.burn.summary(),
        }

"""One round's draw of a ball drum: reads in, findings out, a ball never placed twice.

A read is trusted only when it cannot contradict the drum; anything else waits for a re-read or a
supervisor (contracts §6; seed-001 §6 [GAP]: no misread or machine-failure rules). Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from tablectl.controller.core.events import BallDrawn
from tablectl.controller.games.draw import DrawRules, draw_result, in_range, ladder_end
from tablectl.controller.games.findings import Finding

# Finding codes (docs/verdicts.md, "Ball draws"). Strings: they travel in JSON as they are.
BALL_OUT_OF_RANGE: Final = "ball_out_of_range"
DUPLICATE_BALL: Final = "duplicate_ball"
REREAD_REQUIRED: Final = "reread_required"
POSITION_MISSING: Final = "position_missing"
POSITION_OUT_OF_RANGE: Final = "position_out_of_range"

# Why a read is held (``data.reason`` of a ``reread_required`` verdict).
LOW_QUALITY: Final = "low_quality"
DISAGREEMENT: Final = "disagreement"
OUT_OF_RANGE: Final = "out_of_range"
REPEATED: Final = "repeated"

RULE_GENERAL: Final = "seed-001 §6 (general), contracts §6"
RULE_REREAD: Final = "contracts §6 (a ball read twice → re-read); seed-001 §6 [GAP]"


@dataclass(slots=True)
class _Entry:
    seq: int
    """Which read of the round first claimed this slot (the read order)."""
    position: int | None
    ball: int


@dataclass(slots=True)
class _Pending:
    """A slot whose read is not trusted yet."""

    seq: int
    position: int | None
    reason: str
    trusted: set[int]
    """Good reads of this slot that disagree; a re-read must agree with one of them (empty: any
    good read settles it)."""
    candidate: int | None
    """What ``confirm`` places (the latest valid read); ``None``: confirm drops the read."""


class Draw:
    """Invariant: the placed balls are in range and distinct, whatever reads arrive; a held slot
    blocks completion until a re-read, a manual entry or a supervisor settles it."""

    def __init__(self, rules: DrawRules) -> None:
        self._rules = rules
        self._entries: list[_Entry] = []
        self._pending: list[_Pending] = []
        self._reads = 0

    @property
    def reads(self) -> int:
        """Reads that claimed a new slot so far (re-reads of a held slot not counted)."""
        return self._reads

    @property
    def held(self) -> bool:
        """Whether some read waits for a re-read or a supervisor."""
        return bool(self._pending)

    def balls(self) -> list[int]:
        """The placed balls in draw order."""
        return [e.ball for e in self._ordered()]

    def pending(self) -> list[dict[str, Any]]:
        """The held slots, for snapshots: position (or read number) and reason."""
        return [
            {"position": p.position, "read": p.seq + 1, "reason": p.reason} for p in self._pending
        ]

    def read(self, event: BallDrawn) -> list[Finding]:
        """Take one ball read. A read of a held slot (same position, or, without positions, the
        next read) is its re-read; any other read claims a new slot."""
        rules = self._rules
        pos = event.position
        if rules.order == "position":
            if pos is None:
                return [
                    self._finding(
                        POSITION_MISSING, "seed-001 §6.1 L2123", "a positional draw needs "
                        "the receiver position of each ball", event,
                    )
                ]  # fmt: skip
            if not 1 <= pos <= rules.slots:
                return [
                    self._finding(
                        POSITION_OUT_OF_RANGE, "seed-001 §6.1 L2123",
                        f"position {pos} is not a receiver (1..{rules.slots})", event,
                    )
                ]  # fmt: skip
        elif pos is not None and pos < 1:
            return [
                self._finding(POSITION_OUT_OF_RANGE, RULE_GENERAL, f"position {pos} < 1", event)
            ]
        target = self._pending_for(pos)
        if target is not None:
            return self._reread(target, event)
        seq = self._reads
        self._reads += 1
        return self._claim(seq, event)

    def confirm(self) -> bool:
        """A supervisor accepts the oldest held read as the device gave it: a valid ball is
        placed; a repeated or out-of-range number is dropped (the same ball read twice, or no
        ball). ``False`` when nothing is held."""
        if not self._pending:
            return False
        held = self._pending.pop(0)
        ball = held.candidate
        if ball is not None and in_range(self._rules, ball) and self._holder(ball) is None:
            self._entries.append(_Entry(held.seq, held.position, ball))
        return True

    def complete(self, *, ended: bool = False) -> bool:
        """Whether the draw has its balls (nothing held). ``ended``: the drum says the draw is
        over, so a variable bonus (``bonus_min``) counts as complete with its fewest balls."""
        if self._pending:
            return False
        if self._rules.crash_color is not None:
            # Cash or Crash (seed-001 §6.13 L4407): over at the crash or the top, not at a count;
            # the drum saying it is done changes nothing.
            return ladder_end(self._rules, self.balls()) is not None
        need = self._rules.slots_min if ended else self._rules.slots
        if self._rules.order == "position":
            filled = {e.position for e in self._entries}
            return all(p in filled for p in range(1, need + 1))
        return len(self._entries) >= need

    def result(self) -> tuple[dict[str, Any], list[int]]:
        """The settled result and the balls past the count (extras, in order). Only when
        :meth:`complete`."""
        ordered = self.balls()
        if self._rules.crash_color is not None:
            end = ladder_end(self._rules, ordered) or len(ordered)
            return draw_result(self._rules, ordered[:end]), ordered[end:]
        used = ordered[: self._rules.slots]
        k = self._rules.draw
        return draw_result(self._rules, used[:k], used[k:]), ordered[self._rules.slots :]

    # -- internals --------------------------------------------------------------------------------

    def _ordered(self) -> list[_Entry]:
        if self._rules.order == "position":
            return sorted(self._entries, key=lambda e: (e.position or 0, e.seq))
        return sorted(self._entries, key=lambda e: e.seq)

    def _pending_for(self, pos: int | None) -> _Pending | None:
        for p in self._pending:
            if p.position == pos:
                return p
        return None

    def _holder(self, ball: int) -> _Entry | None:
        for e in self._entries:
            if e.ball == ball:
                return e
        return None

    def _at(self, pos: int | None) -> _Entry | None:
        if pos is None:
            return None
        for e in self._entries:
            if e.position == pos:
                return e
        return None

    def _good(self, event: BallDrawn) -> bool:
        return event.manual or event.quality is None or event.quality >= self._rules.min_quality

    def _claim(self, seq: int, event: BallDrawn) -> list[Finding]:
        ball, pos = event.ball, event.position
        if not in_range(self._rules, ball):
            self._hold(seq, pos, OUT_OF_RANGE, set(), None)
            return [
                self._finding(
                    BALL_OUT_OF_RANGE, RULE_GENERAL,
                    f"ball {ball} is not in {self._rules.lowest}..{self._rules.highest}", event,
                ),
                self._reread_finding(OUT_OF_RANGE, event),
            ]  # fmt: skip
        here = self._at(pos)
        holder = self._holder(ball)
        if here is not None and here.ball == ball:
            # The reader reported the ball at its own receiver again: the reading agrees.
            return [self._duplicate(event, here, held=False)]
        if here is not None:
            # Two reads of one receiver disagree: neither is trusted until one is confirmed.
            self._entries.remove(here)
            trusted = {here.ball}
            candidate: int | None = None
            if holder is None and self._good(event):
                trusted.add(ball)
                candidate = ball
            self._hold(here.seq, pos, DISAGREEMENT, trusted, candidate)
            findings = [self._duplicate(event, holder, held=True)] if holder is not None else []
            return [*findings, self._reread_finding(DISAGREEMENT, event, was=here.ball)]
        if holder is not None:
            # A drawn ball read again elsewhere, or with no position to tell: either the same
            # ball read twice or a different ball misread. Never placed twice; re-read.
            self._hold(seq, pos, REPEATED, set(), None)
            return [
                self._duplicate(event, holder, held=True),
                self._reread_finding(REPEATED, event),
            ]
        if not self._good(event):
            self._hold(seq, pos, LOW_QUALITY, set(), ball)
            return [self._reread_finding(LOW_QUALITY, event)]
        self._entries.append(_Entry(seq, pos, ball))
        return []

    def _reread(self, held: _Pending, event: BallDrawn) -> list[Finding]:
        ball = event.ball
        if not in_range(self._rules, ball):
            return [
                self._finding(
                    BALL_OUT_OF_RANGE, RULE_GENERAL,
                    f"ball {ball} is not in {self._rules.lowest}..{self._rules.highest}", event,
                ),
                self._reread_finding(held.reason, event),
            ]  # fmt: skip
        holder = self._holder(ball)
        if holder is not None:
            return [
                self._duplicate(event, holder, held=True),
                self._reread_finding(held.reason, event),
            ]
        if event.manual:
            # A supervisor's hand entry is the authority on the held slot.
            return self._settle(held, ball)
        if not self._good(event):
            held.candidate = ball
            return [self._reread_finding(held.reason, event)]
        if held.trusted and ball not in held.trusted:
            held.trusted.add(ball)
            held.candidate = ball
            return [self._reread_finding(held.reason, event)]
        return self._settle(held, ball)

    def _settle(self, held: _Pending, ball: int) -> list[Finding]:
        self._pending.remove(held)
        self._entries.append(_Entry(held.seq, held.position, ball))
        return []

    def _hold(
        self, seq: int, pos: int | None, reason: str, trusted: set[int], candidate: int | None
    ) -> None:
        self._pending.append(_Pending(seq, pos, reason, trusted, candidate))

    def _duplicate(self, event: BallDrawn, holder: _Entry, *, held: bool) -> Finding:
        where = f"position {holder.position}" if holder.position is not None else "the draw"
        return self._finding(
            DUPLICATE_BALL,
            RULE_REREAD,
            f"ball {event.ball} is already in {where}: never placed twice"
            + ("; held for a re-read" if held else ""),
            event,
            held=held,
        )

    def _reread_finding(self, reason: str, event: BallDrawn, **extra: Any) -> Finding:
        return self._finding(
            REREAD_REQUIRED,
            RULE_REREAD,
            f"read of ball {event.ball} held ({reason}): re-read, enter by hand, confirm or void",
            event,
            reason=reason,
            **extra,
        )

    def _finding(
        self, code: str, rule: str, message: str, event: BallDrawn, **extra: Any
    ) -> Finding:
        data: dict[str, Any] = {"ball": event.ball, "position": event.position}
        if event.reader is not None:
            data["reader"] = event.reader
        if event.quality is not None:
            data["quality"] = event.quality
        data.update(extra)
        return Finding(code, rule, message, data)

"""The table's commands (``cmd/{verb}``): caps, authority, refusals, the verbs, the reply.

Verbs: ``void`` (``reason``, ``round``: the round in play, optional ``by``), ``event`` (a
normalized event under ``event``, journaled as manual: a scanner failed and the dealer keys it
in), ``clear_fault`` (``code``, ``device``), ``status``, ``resend`` (``from_seq``, ``to_seq``:
published records again, for the floor's archive:
:mod:`tablectl.controller.service.runner.resend`). All but the reads ``status`` and ``resend``
change a round or a fault and need, with a :class:`CommandAuthority`, a signature by a role
``[security] require`` allows (:mod:`tablectl.controller.mqtt.authority`); without one they are
refused (``commands_disabled``) unless ``insecure_commands`` (labs).

An accepted command is journaled as a ``command`` record with who sent it before anything is
acted on (R19: logical access is logged with who and why). Refusals are counted and journaled
once per window (:mod:`tablectl.controller.mqtt.refusals`), so a flood of them cannot bloat the
journal. Every reply says ``ok``; a refusal also has a stable ``code`` and a one-line ``error``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import replace
from typing import Any, Final

import structlog

from tablectl.controller.core.bounded_json import read_object
from tablectl.controller.core.errors import EventFormatError, JournalError, MalformedError
from tablectl.controller.core.events import FaultCleared, TableEvent, Void, parse_event
from tablectl.controller.core.time import format_ts, parse_ts
from tablectl.controller.journal import Journal, JournalRecord
from tablectl.controller.mqtt.authority import CommandAuthority, CommandVerdict, action_for
from tablectl.controller.mqtt.refusals import RefusalLog
from tablectl.controller.service.outage import JOURNAL_UNAVAILABLE
from tablectl.controller.service.runner.commit import Committer
from tablectl.controller.service.runner.hold import WRONG_ROUND
from tablectl.controller.service.runner.records import MAX_REASON, OUTPUT_TYPES, clip
from tablectl.controller.service.runner.resend import ANONYMOUS, Resender, ResendRefusedError
from tablectl.controller.service.runner.state import EventQueue, TableState
from tablectl.controller.service.runner.views import TableOutputs, TableViews, status_view
from tablectl.controller.staff.identity import NOBODY, IdentityError, Sender, sender, staff_event
from tablectl.controller.staff.roster import Roster
from tablectl.drivers.clock import Clock

log = structlog.get_logger("tablectl.runner")

COMMAND_VERBS = ("clear_fault", "clock_confirm", "event", "resend", "status", "void")

COMMANDS_DISABLED: Final = "commands_disabled"
"""The refusal code of a round- or fault-changing command on a table without ``[security]``
roles (safe by default, contracts §7)."""

FIELD_TOO_LONG: Final = "field_too_long"
_MALFORMED: Final = frozenset({"payload_too_large", "bad_request", "unknown_command"})

MAX_FIELD_CHARS: Final = 256
"""Longest string a command field may hold (a void reason is a code such as
``foreign_object``; a card is two characters): a longer one is refused, not journaled."""
_FIELD_LIMITS: Final[Mapping[str, int]] = {"reason": 64, "by": 64, "id": 128}
"""Tighter limits for the fields every command may carry."""

MAX_COMMAND_BYTES = 64 * 1024
"""Largest command payload decoded; a manual event is a few hundred bytes, so anything near
this is a mistake or an attack, refused before it costs a parse (or a deep recursion)."""

_NONCE_SEED_RECORDS = 20_000
"""Journal records scanned for recently used nonces after a restart (far more than a table
journals within a freshness window)."""

_COMMAND_TIMEOUT = 10
"""Seconds an accepted command's event may take to be journaled and applied."""


class Refusals:
    """Refused commands, counted and journaled as one record per window
    (:mod:`tablectl.controller.mqtt.refusals`), so a flood of them cannot bloat the journal.

    Args:
        log: the current window's refusals.
        committer: journals a window's record.
        state: none is journaled while the journal is out (the window is kept).
        clock: the table's clock (its wall time).
    """

    def __init__(
        self,
        log: RefusalLog,
        *,
        committer: Committer,
        state: TableState,
        clock: Clock,
    ) -> None:
        self.log = log
        self._committer = committer
        self._state = state
        self._clock = clock

    def flush(self, *, force: bool = False) -> None:
        """Journal the current window's refusals as one record (when due, or ``force``)."""
        now = self._clock.now()
        if self._state.outage is not None or not (force or self.log.due(now)):
            return
        record = self.log.take(format_ts(now))
        if record is not None and not self._committer.journal_records([record], raising=False):
            self.log.put_back(record, now)

    @property
    def every(self) -> float:
        """Seconds between two looks at the window (the table's scheduler)."""
        return min(1.0, self.log.window / 2)

    async def look(self) -> float:
        """Close the window when it has run its time, even if no command follows."""
        if self.log.pending:
            self.flush()
        return self.every


class CommandDesk:
    """Answers ``cmd/{verb}`` for one table.

    Args:
        views: the clock's suspicion, and told when a supervisor confirms the clock.
        refusals: refused commands (journaled as one record per window).
        outputs: where ``resend`` publishes (the publisher's Outbound).
        authority: verifies signed commands (``[security] roles``); ``None``: see ``insecure``.
        insecure: without an authority, accept unsigned commands (labs) instead of refusing them.
    """

    def __init__(
        self,
        *,
        state: TableState,
        journal: Journal,
        committer: Committer,
        queue: EventQueue,
        views: TableViews,
        refusals: Refusals,
        outputs: TableOutputs,
        clock: Clock,
        authority: CommandAuthority | None,
        insecure: bool,
        roster: Roster | None = None,
    ) -> None:
        self._state = state
        self._roster = roster
        self._journal = journal
        self._committer = committer
        self._queue = queue
        self._views = views
        self._clock = clock
        self._authority = authority
        self._insecure = insecure
        self._refusals = refusals
        self.resender = Resender(journal, outputs, clock)
        """Answers ``resend`` (its rate budget is per table)."""

    async def command(self, verb: str, payload: bytes) -> dict[str, Any]:
        """Handle ``cmd/{verb}``; the reply carries the request's ``id`` for correlation.

        Never raises: whatever arrives on ``cmd/+`` is answered.
        """
        try:
            return await self._command(verb, payload)
        except Exception as exc:  # a bug here must cost one reply, never the table
            log.exception("command_failed", verb=clip(verb))
            return _reply(None, error=f"internal error: {type(exc).__name__}", code="internal")

    async def _command(self, verb: str, payload: bytes) -> dict[str, Any]:
        request, problem = _decode_request(payload)
        corr = _safe_id(request.get("id")) if request is not None else None
        table = self._state
        if verb == "status":
            state = dict(table.engine.snapshot())
            return _reply(corr, ok=True, state=state, **status_view(table.outage))
        if request is None:
            code = "payload_too_large" if len(payload) > MAX_COMMAND_BYTES else "bad_request"
            return self._refuse(verb, None, CommandVerdict(False, problem), code, size=len(payload))
        if verb == "resend":
            return await self._resend(request, corr)
        if verb not in COMMAND_VERBS:
            error = f"unknown command {clip(verb)!r} (known: {', '.join(COMMAND_VERBS)})"
            return self._refuse(verb, request, CommandVerdict(False, error), "unknown_command")
        # First: a signed command spends its nonce here, whatever refuses it next (an outage,
        # a field too long), so a refused command cannot be replayed into a later round.
        verdict, code = self._authorise(verb, request)
        if table.outage is not None:
            # Nothing unjournaled is acted on, and the command record cannot be journaled.
            table.outage.commands_refused += 1
            why = "journal unavailable: the table is locked"
            return self._refuse(verb, request, _refused(verdict, why), JOURNAL_UNAVAILABLE)
        bad = _bad_field(request)
        if bad is not None:
            code, why = bad
            return self._refuse(verb, request, _refused(verdict, why), code)
        if not verdict.accepted:
            return self._refuse(verb, request, verdict, code)
        try:
            who = sender(self._roster, request, verdict.role)
        except IdentityError as exc:
            return self._refuse(verb, request, _refused(verdict, str(exc)), exc.code)
        if verb == "clock_confirm":
            return self._confirm_clock(request, verdict, corr, who)
        try:
            event = staff_event(self._roster, self._command_event(verb, request), who, verdict.role)
        except IdentityError as exc:
            return self._refuse(verb, request, _refused(verdict, str(exc)), exc.code)
        except EventFormatError as exc:
            code = exc.code if isinstance(exc, CommandRefusedError) else "bad_request"
            return self._refuse(verb, request, _refused(verdict, str(exc)), code)
        if verdict.verified and isinstance(event, Void):
            # The journaled decision names the person whose signature was verified.
            event = replace(event, by=verdict.by)
        # The verdict is durable before the event is acted on; a journal that cannot take it
        # cannot take the event either, so nothing happens unrecorded.
        record = self._journal_command(verb, request, verdict, who)
        if record is None:
            error = "not journaled: the journal refused the command record"
            return _reply(corr, error=error, code=JOURNAL_UNAVAILABLE)
        try:
            records = await asyncio.wait_for(self._queue.submit(event), timeout=_COMMAND_TIMEOUT)
        except (JournalError, ValueError, TimeoutError) as exc:
            error = f"not journaled: {exc or type(exc).__name__}"
            return _reply(corr, error=error, code="not_journaled")
        outputs = [r.as_dict() for r in records if r.type in OUTPUT_TYPES]
        return _reply(corr, ok=True, seq=records[0].seq, command_seq=record.seq, outputs=outputs)

    def _confirm_clock(
        self, request: Mapping[str, Any], verdict: CommandVerdict, corr: object, who: Sender
    ) -> dict[str, Any]:
        """``cmd/clock_confirm``: the table's clock is right now (after a ``clock_step``);
        retention resumes and signed commands are judged by their time again."""
        if self._views.clock_suspect() is None:
            why = "the table's clock is not suspect: nothing to confirm"
            return self._refuse("clock_confirm", request, _refused(verdict, why), "clock_trusted")
        record = self._journal_command("clock_confirm", request, verdict, who)
        if record is None:
            error = "not journaled: the journal refused the command record"
            return _reply(corr, error=error, code=JOURNAL_UNAVAILABLE)
        try:
            stored = self.confirm_clock(by=verdict.by, role=verdict.role)
        except JournalError as exc:
            return _reply(corr, error=f"not journaled: {exc}", code="not_journaled")
        seq = stored[0].seq if stored else None
        return _reply(corr, ok=True, seq=seq, command_seq=record.seq)

    def confirm_clock(self, *, by: str | None, role: str | None) -> list[JournalRecord]:
        """Journal ``clock_confirmed`` (a supervisor says the clock is right); retention resumes.

        Raises:
            JournalError: the journal refused the record (the clock stays suspect).
        """
        watch = self._views.clock_watch
        if watch is None or watch.suspect is None:
            return []
        suspect = watch.suspect
        record = watch.confirm(by=by, role=role)
        try:
            stored = self._committer.journal_records([record], raising=True)
        except JournalError:
            watch.suspect = suspect
            raise
        self._views.clock_changed()
        return stored

    async def _resend(self, request: dict[str, Any], corr: object) -> dict[str, Any]:
        """Answered also while the journal refuses writes, not journaled (it changes nothing);
        with ``[security]`` signed by the ``resend`` action's role; bounded by the resender's
        cap and its requester's rate (refusals counted as any)."""
        bad = _bad_field(request)
        if bad is not None:
            return self._refuse("resend", request, CommandVerdict(False, bad[1]), bad[0])
        requester = ANONYMOUS
        if self._authority is not None:
            # With [security]: the resend action's role (the floor's archive), signed.
            verdict, code = self._authorise("resend", request)
            if not verdict.accepted:
                return self._refuse("resend", request, verdict, code)
            requester = f"{verdict.role}:{verdict.by}"
        try:
            fields = await self.resender.resend(request, requester)
        except ResendRefusedError as exc:
            return self._refuse("resend", request, CommandVerdict(False, str(exc)), exc.code)
        log.info("resend", **fields)
        return _reply(corr, ok=True, **fields)

    def _authorise(self, verb: str, request: Mapping[str, Any]) -> tuple[CommandVerdict, str]:
        """The verdict on a command that changes a round or a fault, and a refusal's code."""
        by = request.get("by")
        claimed = clip(by) if isinstance(by, str) else None
        authority = self._authority
        if authority is None:
            if self._insecure:
                return CommandVerdict(True, by=claimed), ""
            return CommandVerdict(
                False,
                "commands are disabled: this table has no [security] roles "
                "(insecure_commands = true for a lab)",
                by=claimed,
            ), COMMANDS_DISABLED
        now = self._clock.now()
        if not authority.seeded and action_for(verb, request) is not None:
            # After a restart: the nonces accepted just before it must stay spent.
            since = max(0, self._journal.last_seq - _NONCE_SEED_RECORDS)
            suspect = self._views.clock_suspect() is not None
            authority.seed(self._journal.records(since), now, held=suspect)
        verdict = authority.check(verb, request, now, clock_suspect=self._views.clock_suspect())
        return verdict, verdict.code or "unauthorised"

    def _refuse(
        self,
        verb: str,
        request: Mapping[str, Any] | None,
        verdict: CommandVerdict,
        code: str,
        *,
        size: int | None = None,
    ) -> dict[str, Any]:
        """Count a refusal (journaled once per window) and build its reply."""
        now = self._clock.now()
        details = self._command_fields(verb, request, verdict)
        del details["ts"], details["accepted"]
        if size is not None:
            details["bytes"] = size
        refusals = self._refusals
        refusals.log.add(now, format_ts(now), code, details)
        log.info("command_refused", verb=details["verb"], code=code, reason=details["reason"])
        if refusals.log.due(now):
            refusals.flush()
        corr = _safe_id(request.get("id")) if request is not None else None
        # A malformed request says what is wrong with it; a well-formed one, why it was refused.
        error = verdict.reason if code in _MALFORMED else f"refused: {verdict.reason}"
        return _reply(corr, error=error or "refused", code=code)

    def _command_fields(
        self, verb: str, request: Mapping[str, Any] | None, verdict: CommandVerdict
    ) -> dict[str, Any]:
        """What the journal says about a command: verb, id, verdict and who; never a secret."""
        fields: dict[str, Any] = {
            "ts": format_ts(self._clock.now()),
            "verb": clip(verb),
            "id": _safe_id(request.get("id")) if request is not None else None,
            "accepted": verdict.accepted,
            "reason": clip(verdict.reason, MAX_REASON) if verdict.reason else None,
            "role": verdict.role,
            "by": clip(verdict.by) if verdict.by is not None else None,
            "verified": verdict.verified,
        }
        if verdict.nonce is not None:
            fields["nonce"] = verdict.nonce
        body = request.get("event") if request is not None else None
        if verb == "event" and isinstance(body, Mapping) and isinstance(body.get("type"), str):
            fields["event_type"] = clip(body["type"])
        return fields

    def _journal_command(
        self,
        verb: str,
        request: Mapping[str, Any],
        verdict: CommandVerdict,
        who: Sender = NOBODY,
    ) -> JournalRecord | None:
        """Journal an accepted command's ``command`` record before it acts.

        Returns the stored record, or ``None`` when the journal refused it (logged: the reply
        says so, and the command is then not acted on).
        """
        record = {"type": "command", **self._command_fields(verb, request, verdict), **who.fields()}
        stored = self._committer.journal_records([record], raising=False)
        if not stored:
            log.error("command_not_journaled", verb=record["verb"])
            return None
        log.info(
            "command",
            verb=record["verb"],
            accepted=verdict.accepted,
            role=verdict.role,
            by=record["by"],
        )
        return stored[0]

    def _command_event(self, verb: str, request: Mapping[str, Any]) -> TableEvent:
        ts = format_ts(self._clock.now())
        if verb == "void":
            reason = request.get("reason")
            by = request.get("by")
            if not isinstance(reason, str) or not reason.strip():
                raise EventFormatError("void needs a non-empty string 'reason'")
            if by is not None and not isinstance(by, str):
                raise EventFormatError("'by' must be a string")
            void = Void(ts=ts, reason=reason, by=by, round=request.get("round"), manual=True)
            return self._bound_void(void)
        if verb == "event":
            body = request.get("event")
            if not isinstance(body, dict):
                raise EventFormatError("event needs an 'event' object (a normalized event)")
            event = parse_event({k: v for k, v in body.items() if k not in ("seq", "manual")})
            if event.ts is not None and parse_ts(event.ts) is None:
                # The time rule at this edge (core.time): a naive or malformed time is refused.
                raise EventFormatError(
                    f"event 'ts' {event.ts!r} is not an ISO 8601 time with a zone (Z or +01:00)"
                )
            if isinstance(event, Void):
                event = self._bound_void(event)
            return replace(event, ts=event.ts or ts, manual=True)
        if verb == "clear_fault":
            code = request.get("code")
            device = request.get("device")
            if not isinstance(code, str) or not isinstance(device, str):
                raise EventFormatError("clear_fault needs string 'code' and 'device'")
            if code not in self._state.latches.journaled.get(device, set()):
                raise EventFormatError(f"fault {code!r} is not latched on device {device!r}")
            return FaultCleared(ts=ts, device=device, code=code, manual=True)
        raise EventFormatError(f"unknown command {verb!r} (known: {', '.join(COMMAND_VERBS)})")

    def _bound_void(self, void: Void) -> Void:
        """A supervisor's void names the round it voids, and it is the round in play: one sent
        for a round that has ended can never void the next (issue: a replayed void)."""
        if not isinstance(void.round, str) or not void.round:
            raise EventFormatError(
                "void needs 'round': the round it voids (cmd/status shows the round in play)"
            )
        current = self._state.engine.current_round
        if void.round != current:
            raise CommandRefusedError(
                WRONG_ROUND,
                f"void names round {clip(void.round)!r}, but the round in play is "
                f"{current!r}: nothing voided",
            )
        return void


class CommandRefusedError(EventFormatError):
    """A command well formed but refused with its own code (internal to the desk)."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code


def _refused(verdict: CommandVerdict, why: str) -> CommandVerdict:
    """``verdict`` refused for ``why``, keeping who signed it and the nonce it spent."""
    return replace(verdict, accepted=False, reason=why)


def _bad_field(request: Mapping[str, Any]) -> tuple[str, str] | None:
    """``(code, why)`` for a string field of a decoded request over its cap (or not UTF-8).

    Checked before the request's event is parsed or anything is journaled: a 2,000-character
    void reason used to be journaled (and published) whole.
    """
    stack: list[tuple[str, object]] = [("", request)]
    while stack:
        path, value = stack.pop()
        if isinstance(value, str):
            limit = _FIELD_LIMITS.get(path, MAX_FIELD_CHARS)
            if len(value) > limit:
                why = f"field {clip(path)!r} has {len(value)} characters (at most {limit})"
                return FIELD_TOO_LONG, why
            if not _is_utf8(value):
                return "bad_request", f"field {clip(path)!r} is not UTF-8 text (a lone surrogate)"
        elif isinstance(value, Mapping):
            if any(isinstance(key, str) and len(key) > MAX_FIELD_CHARS for key in value):
                where = f"field {clip(path)!r}" if path else "the request"
                return FIELD_TOO_LONG, f"{where} has a key over {MAX_FIELD_CHARS} characters"
            stack.extend((f"{path}.{key}" if path else str(key), v) for key, v in value.items())
        elif isinstance(value, list):
            stack.extend((f"{path}[{index}]", item) for index, item in enumerate(value))
    return None


def _is_utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _safe_id(value: object) -> str | int | None:
    """A correlation id that survives canonical JSON, or ``None`` for anything else."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value if abs(value) < 2**63 else None
    if isinstance(value, str):
        return clip(value, 128)
    return None


def _decode_request(payload: bytes) -> tuple[dict[str, Any], None] | tuple[None, str]:
    """``(request, None)`` or ``(None, why not)`` for a command payload; never raises. Read by
    the controller's one bounded reader (size, UTF-8, depth counted before parsing, numbers)."""
    if not payload:
        return {}, None
    try:
        return read_object(payload, max_bytes=MAX_COMMAND_BYTES), None
    except MalformedError as exc:
        if exc.reason == "too_large":
            return None, f"payload too large: {len(payload)} bytes (at most {MAX_COMMAND_BYTES})"
        if exc.reason == "not_object":
            return None, "payload must be a JSON object"
        return None, f"payload is not JSON: {clip(exc.detail, MAX_REASON)}"


def _reply(
    corr: object, *, ok: bool = False, error: str | None = None, **extra: Any
) -> dict[str, Any]:
    reply: dict[str, Any] = {"schema": 1, "id": corr, "ok": ok and error is None}
    if error is not None:
        reply["error"] = clip(error, MAX_REASON)
    reply.update(extra)
    return reply

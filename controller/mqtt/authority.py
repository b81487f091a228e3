"""Whether a command may run: role-checked, signed, fresh and not replayed (§7).

The broker link (:mod:`tablectl.controller.mqtt.security`) decides who may publish on a table's
``cmd/#`` at all; this module decides whether a command that changes a round may run.
:class:`CommandAuthority` checks the signature that
:func:`~tablectl.controller.mqtt.security.sign_command` makes (the request format is described
there): keyed by the *role's* secret (``[security] roles``), bound to the table and the verb,
fresh within ``max_age`` seconds, with a nonce that is accepted once. :data:`EVENT_ACTIONS` and
:func:`action_for` say which ``[security] require`` action a command needs;
:func:`authority_for` builds the table's authority from its config.
"""

from __future__ import annotations

import hashlib
import hmac
import re
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Final

import structlog

from tablectl.controller.config import SecurityConfig, TableConfig
from tablectl.controller.core.time import parse_ts_seconds
from tablectl.controller.journal import JournalRecord
from tablectl.controller.mqtt.security import client_security, signing_bytes
from tablectl.controller.secrets import read_key_file
from tablectl.controller.staff.roster import describe_staff

log = structlog.get_logger("tablectl.security")


EVENT_ACTIONS: Final[Mapping[str, str]] = {
    # What a dealer keys in when a reader failed (contracts §4.4 manual events).
    "round_open": "event",
    "bets_closed": "event",
    "ball_launched": "event",
    "winning_number": "event",
    "card": "event",
    "cut_card": "event",
    "shuffle_started": "event",
    "shuffle_completed": "event",
    "ball_drawn": "event",
    "segment": "event",
    "wheel_spin": "event",
    "mixing": "event",
    "read_error": "event",
    "shoe_empty": "event",
    "decision": "event",
    # Dice (docs/games/dice.md): the shaker's start, the dice a reader missed, and the
    # stickman's "no roll" (a die off the table: a re-roll with bets standing, not a void).
    "roll_started": "event",
    "dice": "event",
    "roll_invalid": "event",
    # Fan Tan (docs/games/fan_tan.md): the bead count a dealer keys in when no counter reads it.
    "beads": "event",
    # Ends the round in play without a result: what ``cmd/void`` needs. A ``no_spin`` voids the
    # spin (seed-000 V-RL-5); a ``deal_error`` can void the round (PKH-21).
    "void": "void",
    "no_spin": "void",
    "deal_error": "void",
    # Locks the table (R14) and can void the round in play (void_on_fault): never a dealer's.
    "fault": "fault",
    "shoe_removed": "fault",
    "tube_full": "fault",
    "fault_cleared": "clear_fault",
    # A supervisor's resolution of a pending round (seed-000 GEN-11).
    "confirm": "confirm",
    # A studio RNG's picks decide what a result pays: the RNG's own role (config.ROLE_ACTIONS).
    "rng_draw": "rng",
    # Who is on duty (docs/station.md): a person signs on and off at the station.
    "staff_on": "staff",
    "staff_off": "staff",
}
"""The action (``[security] require``) that ``cmd/event`` of each event type needs: every type of
:data:`tablectl.controller.core.events.EVENT_TYPES` is listed (a test holds it so), so entering an
event by hand never needs less than the command that does the same thing."""

WHILE_CLOCK_SUSPECT: Final = frozenset({"void", "clear_fault", "clock_confirm"})
"""Actions accepted on signature and nonce alone while the table's clock is suspect: what a
supervisor needs to end a round, unlock the table and confirm the clock."""

READ_VERBS: Final = frozenset({"status"})
"""Verbs that change nothing and disclose nothing new: answered without a role or a signature
(:func:`action_for`). ``resend`` discloses nothing new either, but costs the table's outbox:
with ``[security]`` it is the ``resend`` action's (the floor's ``archive`` role)."""

_HEX_SIG = re.compile(r"[0-9a-fA-F]{64}")
_NONCE = re.compile(r"[A-Za-z0-9_-]{8,64}")
_BY = re.compile(r"[^\x00-\x1f\x7f]{1,64}")


def action_for(verb: str, request: Mapping[str, Any]) -> str | None:
    """The ``[security] require`` action a command needs, or ``None`` when it needs no role.

    ``status`` reads and changes nothing. ``resend`` publishes again, on ``events``, records
    the table already published there (face-down cards still withheld): it tells no one anything
    new, but an unsigned flood of it used up the budget the archive needs and delayed live play,
    so with ``[security]`` it needs the ``resend`` action's role (docs/security.md); a table
    without roles still answers it, bounded per requester. ``cmd/event`` needs its event type's
    action (:data:`EVENT_ACTIONS`); a type not listed there is not an event (parsing refuses it)
    and needs ``event``. Any other verb is its own action, so a verb added later is refused
    until ``require`` names it.
    """
    if verb in READ_VERBS:
        return None
    if verb == "event":
        body = request.get("event")
        kind = body.get("type") if isinstance(body, Mapping) else None
        return EVENT_ACTIONS.get(kind, "event") if isinstance(kind, str) else "event"
    return verb


@dataclass(frozen=True)
class CommandVerdict:
    """Whether a command may run, and what the journal records about who sent it.

    ``role`` and ``nonce`` are set only once the signature verified; ``by`` is the claimed
    sender otherwise (journaled as claimed: ``verified`` says which).
    """

    accepted: bool
    reason: str | None = None
    role: str | None = None
    by: str | None = None
    nonce: str | None = None
    verified: bool = False
    code: str | None = None
    """A refusal's code when it is not ``unauthorised`` (``clock_suspect``)."""


_NO_ROLE: Final[Mapping[str, str]] = {
    "resend": "add an archive role key, so the floor's archive can fill its gaps",
    "clock_confirm": "a clock step is then cleared only by the clock's return",
}
"""What an action nobody may sign means, for ``check-config``."""


def _show(value: object) -> str:
    """An untrusted value for an error message: its repr, bounded and ASCII-safe."""
    text = ascii(value)
    return text if len(text) <= 40 else text[:39] + "…"


class CommandAuthority:
    """Checks signed commands against role keys, freshness and replays (see module doc).

    Args:
        keys: role → HMAC key.
        required: action → roles allowed (``SecurityConfig.required``).
        table: the table id a request must be signed for.
        max_age: seconds a request's ``ts`` may be off the table's clock, either way.
        max_nonces: bound on remembered nonces; when full of unexpired ones, signed commands are
            refused (fail closed) until some expire, rather than forgetting one early.
    """

    def __init__(
        self,
        keys: Mapping[str, bytes],
        required: Mapping[str, frozenset[str]],
        *,
        table: str,
        max_age: float = 30.0,
        max_nonces: int = 10_000,
    ) -> None:
        self._keys = dict(keys)
        self._required = dict(required)
        self._table = table
        self.max_age = max_age
        self._max_nonces = max_nonces
        # nonce -> wall-clock time after which its ts is out of the window anyway. Insertion
        # order is close to expiry order, so pruning from the front is cheap.
        self._nonces: OrderedDict[str, float] = OrderedDict()
        self._held_nonces: set[str] = set()
        """Nonces seen while the table's clock was suspect: no window to expire them by."""
        self.seeded = False
        """Whether :meth:`seed` ran (the runner seeds from the journal before the first check)."""

    @classmethod
    def from_config(cls, section: SecurityConfig, table: str) -> CommandAuthority:
        """Read every role's key file now (at start).

        Raises:
            ConfigError: naming the role and file that is missing, unreadable or too short.
        """
        keys = {role: read_key_file(path, role) for role, path in section.roles.items()}
        return cls(
            keys,
            section.required,
            table=table,
            max_age=section.max_age,
            max_nonces=section.max_nonces,
        )

    def describe(self) -> list[str]:
        """Lines for ``check-config``: which roles may send what."""
        return [
            f"command {action}: signed by {' or '.join(sorted(roles))}"
            if roles
            else f"command {action}: refused (no role may sign it: {_NO_ROLE.get(action, '')})"
            for action, roles in sorted(self._required.items())
        ]

    # -- replay protection -----------------------------------------------------------------

    def _prune(self, now: float) -> None:
        while self._nonces:
            nonce, until = next(iter(self._nonces.items()))
            if until > now:
                return
            del self._nonces[nonce]

    def _remember(self, nonce: str, until: float) -> None:
        self._nonces[nonce] = until
        self._nonces.move_to_end(nonce)

    def seed(self, records: Iterable[JournalRecord], now: float, *, held: bool = False) -> None:
        """Remember the nonces of ``command`` records (accepted) and ``commands_refused`` records
        (signed but refused) still inside the window.

        Called once after a restart with the journal's recent records, so a command seen just
        before a crash cannot be replayed just after it. ``held`` (the clock is suspect: times
        judge nothing) keeps every nonce of those records, whatever its time.
        """
        for record in records:
            at = parse_ts_seconds(record.ts)
            if at is None or (at + 2 * self.max_age <= now and not held):
                continue
            if record.type == "command" and record.get("accepted") is True:
                nonces = [record.get("nonce")]
            elif record.type == "commands_refused":
                # Refused but signed: spent too (a window's record lists them).
                nonces = record.get("nonces") or []
            else:
                continue
            for nonce in nonces if isinstance(nonces, list) else []:
                if isinstance(nonce, str) and held:
                    self._held_nonces.add(nonce)
                elif isinstance(nonce, str):
                    self._remember(nonce, at + 2 * self.max_age)
        self._prune(now)
        self.seeded = True

    # -- the check -------------------------------------------------------------------------

    def check(
        self,
        verb: str,
        request: Mapping[str, Any],
        now: float,
        *,
        clock_suspect: str | None = None,
    ) -> CommandVerdict:
        """Decide on one decoded request; never raises. A valid signature consumes the nonce,
        whether the command is then accepted or not.

        ``clock_suspect`` (why the table's clock is suspect: a step not confirmed) means a
        command's time cannot be judged: a stale one is refused as ``clock_suspect``, except a
        supervisor's decision (:data:`WHILE_CLOCK_SUSPECT`), which its signature and an unused
        nonce then carry (its nonce is remembered until the clock is trusted again).
        """
        action = action_for(verb, request)
        claimed = request.get("by")
        by = claimed if isinstance(claimed, str) and _BY.fullmatch(claimed) else None
        if action is None:
            return CommandVerdict(True, by=by)
        allowed = self._required.get(action)
        if not allowed:
            return CommandVerdict(
                False, f"no role may send {_show(action)} ([security] require)", by=by
            )
        needs = " or ".join(sorted(allowed))
        sig = request.get("sig")
        if sig is None:
            return CommandVerdict(False, f"{action} needs a command signed by role {needs}", by=by)
        problem = self._malformed(request, verb)
        if problem is not None:
            return CommandVerdict(False, problem, by=by)
        role = str(request["role"])
        try:
            message = signing_bytes(request)
        except ValueError as exc:
            return CommandVerdict(
                False, f"request cannot be canonicalised for its signature: {exc}"
            )
        expected = hmac.new(self._keys[role], message, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, str(sig).lower()):
            return CommandVerdict(False, f"bad signature for role {role!r}", by=by)
        # Signed by a key holder: its nonce is spent now, whatever follows (a refusal for a
        # journal outage, a stale time, a role that may not): a command refused once is never
        # accepted by a replay of it later.
        nonce = str(request["nonce"])
        signed_at = parse_ts_seconds(request["ts"])
        assert signed_at is not None  # checked by _malformed
        self._prune(now)
        if nonce in self._nonces or nonce in self._held_nonces:
            return CommandVerdict(
                False, "replayed command: nonce already used", role, by, nonce, True
            )
        if len(self._nonces) + len(self._held_nonces) >= self._max_nonces:
            return CommandVerdict(
                False, "too many signed commands in the window: retry later", role, by, None, True
            )
        if clock_suspect is not None:
            self._held_nonces.add(nonce)  # no time to expire by: kept until the clock is trusted
        else:
            self._held_nonces.clear()
            self._remember(nonce, max(now, signed_at) + self.max_age)
        if role not in allowed:
            return CommandVerdict(
                False, f"role {role!r} may not {action} (needs {needs})", role, by, nonce, True
            )
        skew = now - signed_at
        if abs(skew) > self.max_age and clock_suspect is not None:
            if action in WHILE_CLOCK_SUSPECT:
                log.warning("command_time_not_judged", action=action, skew_s=round(skew, 1))
                return CommandVerdict(True, None, role, by, nonce, True)
            return CommandVerdict(
                False,
                f"{clock_suspect}: a signed command's time cannot be judged (signed "
                f"{skew:+.1f} s from the table's clock); only a supervisor's void, clear_fault "
                "or clock_confirm is accepted",
                role,
                by,
                nonce,
                verified=True,
                code="clock_suspect",
            )
        if abs(skew) > self.max_age:
            return CommandVerdict(
                False,
                f"stale command: signed {skew:+.1f} s from the table's clock "
                f"(window ±{self.max_age:g} s)",
                role,
                by,
                nonce,
                verified=True,
            )
        return CommandVerdict(True, None, role, by, nonce, True)

    def _malformed(self, request: Mapping[str, Any], verb: str) -> str | None:
        """What is wrong with a signed request's own fields, before its signature is checked."""
        sig, role = request.get("sig"), request.get("role")
        if not isinstance(sig, str) or not _HEX_SIG.fullmatch(sig):
            return "sig must be 64 hex digits (HMAC-SHA256)"
        if not isinstance(role, str):
            return "role must be a string"
        if role not in self._keys:
            return f"unknown role {_show(role)}"
        by = request.get("by")
        if not isinstance(by, str) or not _BY.fullmatch(by):
            return "by must be 1-64 printable characters (who sent it)"
        table, signed_verb = request.get("table"), request.get("verb")
        if table != self._table:
            return f"signed for table {_show(table)}, not {self._table!r}"
        if signed_verb != verb:
            return f"signed for command {_show(signed_verb)}, not {_show(verb)}"
        if parse_ts_seconds(request.get("ts")) is None:
            return "ts must be an ISO 8601 time with a zone (e.g. 2026-11-30T10:00:00Z)"
        nonce = request.get("nonce")
        if not isinstance(nonce, str) or not _NONCE.fullmatch(nonce):
            return "nonce must be 8-64 characters of A-Z a-z 0-9 _ -"
        return None


# --- composition ------------------------------------------------------------------------------


def authority_for(config: TableConfig) -> CommandAuthority | None:
    """The table's :class:`CommandAuthority`, keys read now; ``None`` without roles.

    Without roles the runner refuses every command that changes a round or a fault
    (``commands_disabled``: safe by default, contracts §7) unless ``[security] insecure_commands =
    true``, which accepts them unauthenticated and is logged loudly at every start.

    Raises:
        ConfigError: a role's key file is missing, unreadable or too short.
    """
    section = config.security
    if section is None:
        log.warning(
            "commands_disabled",
            table=config.table.id,
            hint="no [security]: commands that change a round or a fault are refused",
        )
        return None
    if section.insecure_commands:
        log.warning(
            "commands_not_authenticated",
            table=config.table.id,
            hint="[security] insecure_commands = true: anyone who can publish cmd/+ can void a "
            "round (labs only)",
        )
        return None
    return CommandAuthority.from_config(section, config.table.id)


def insecure_commands(config: TableConfig) -> bool:
    """Whether the table accepts unsigned round- and fault-changing commands (labs only)."""
    return config.security is not None and config.security.insecure_commands


def describe_security(config: TableConfig) -> list[str]:
    """``check-config`` lines about the broker link and commands; reads every secret file.

    Raises:
        ConfigError: naming the CA, certificate, password or key file that is unusable.
    """
    mqtt = config.mqtt
    lines: list[str] = []
    if mqtt.url != "embedded":
        security = client_security(mqtt)
        if security.tls_context is None:
            lines.append("mqtt: no TLS (mqtt://): use mqtts:// beyond the loopback interface")
        else:
            lines.append(f"mqtt: TLS, broker verified against {mqtt.ca_file or 'the system CAs'}")
        if mqtt.cert_file is not None:
            lines.append(f"mqtt: client certificate {mqtt.cert_file}")
        if security.username is not None:
            how = "with a password" if security.password is not None else "without a password"
            lines.append(f"mqtt: user {security.username!r} {how}")
    lines += describe_staff(config)
    if config.security is None:
        lines.append(
            "commands: disabled (no [security]): void, event, clear_fault are refused "
            "(commands_disabled); configure roles to allow them"
        )
        return lines
    if config.security.insecure_commands:
        lines.append(
            "commands: INSECURE (insecure_commands = true): accepted unauthenticated, "
            "labs and demos only"
        )
        return lines
    authority = CommandAuthority.from_config(config.security, config.table.id)
    return lines + authority.describe()

"""Table configuration (contracts §4.2): one TOML file per table, loaded strictly.

One explicit path, no search of several locations: a locked-down table PC has exactly one source
of truth. Unknown keys are errors that name the key and the file. Game- and driver-specific keys
(``[rules]``, extra keys of a ``[[devices]]`` entry) are kept as mappings here and validated by the
engine or driver that owns them, at startup, with the same error style (see
:func:`validate_section`, :func:`validate_device` and :func:`device_error`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import pydantic
from pydantic_core import ErrorDetails

from tablectl.controller.core.errors import ConfigError

_ID_PATTERN = r"^[A-Za-z0-9_-]+$"


class BettingConfig(pydantic.BaseModel):
    """``[betting]`` of a table config."""

    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)

    mode: Literal["device", "timer", "external", "dealer"] = "device"
    """``dealer``: the dealer opens and closes betting at the station (docs/station.md); to the
    controller it is ``external`` (``cmd/event`` round_open / bets_closed)."""
    open_seconds: float = pydantic.Field(default=15.0, gt=0, le=600)
    """How long betting stays open (timer mode)."""
    pause_seconds: float = pydantic.Field(default=3.0, ge=0, le=600)
    """Pause between a round's outcome and the next round opening (timer mode)."""


class _Strict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)


def _port_in_range(listen: str | None) -> str | None:
    """A ``HOST:PORT`` (already matched by the field's pattern) whose port a socket can bind."""
    if listen is not None and int(listen.rpartition(":")[2]) > 65535:
        raise ValueError(f"port of {listen!r} is not in 0-65535")
    return listen


class TableSection(_Strict):
    """``[table]``."""

    id: str = pydantic.Field(pattern=_ID_PATTERN, max_length=64)
    game: str = pydantic.Field(pattern=r"^[a-z][a-z0-9_]*$")


class MqttConfig(_Strict):
    """``[mqtt]``. ``url`` is ``mqtt://host:port``, ``mqtts://…`` or ``"embedded"``."""

    url: str = "mqtt://127.0.0.1:1883"
    topic_prefix: str = pydantic.Field(default="tablectl", pattern=r"^[^#+]+$")
    client_id: str | None = None
    keepalive: int = pydantic.Field(default=30, ge=5, le=3600)
    reconnect_max_delay: float = pydantic.Field(default=5.0, gt=0, le=300)
    embedded_listen: str = pydantic.Field(default="127.0.0.1:1883", pattern=r"^[^:]+:\d{1,5}$")
    """Where the in-process broker listens when ``url = "embedded"``."""
    ca_file: Path | None = None
    """``mqtts://`` only: PEM bundle of the CA(s) that signed the broker's certificate (default:
    the system store). A site CA is the usual case: a table trusts its own broker, not the web."""
    cert_file: Path | None = None
    """``mqtts://`` only: PEM client certificate (the broker may map it to a user, see
    ``use_identity_as_username``); ``key_file`` is its private key unless the PEM holds both."""
    key_file: Path | None = None
    username: str | None = pydantic.Field(default=None, min_length=1, max_length=256)
    password_file: Path | None = None
    """File whose first line is the broker password, read at start. Never the password itself:
    a config file is copied, diffed and attached to tickets; a secret file is ``0400``."""

    @pydantic.model_validator(mode="after")
    def _check_security(self) -> MqttConfig:
        tls_only = [k for k in ("ca_file", "cert_file", "key_file") if getattr(self, k)]
        if tls_only and not self.url.startswith("mqtts://"):
            # Silently ignoring a CA on a plain URL would be the worst outcome: the operator
            # believes the link is verified while it is not even encrypted.
            verb = "needs" if len(tls_only) == 1 else "need"
            raise ValueError(f"{', '.join(tls_only)} {verb} an mqtts:// url")
        if self.key_file is not None and self.cert_file is None:
            raise ValueError("key_file needs cert_file")
        if self.password_file is not None and self.username is None:
            raise ValueError("password_file needs username")
        if self.username is not None and self.url == "embedded":
            raise ValueError('username is not supported with url = "embedded"')
        return self

    @property
    def embedded_address(self) -> tuple[str, int]:
        host, port = self.embedded_listen.rsplit(":", 1)
        return host, int(port)

    _check_embedded_listen = pydantic.field_validator("embedded_listen")(_port_in_range)

    @pydantic.field_validator("url")
    @classmethod
    def _check_url(cls, url: str) -> str:
        if url == "embedded" or url.startswith(("mqtt://", "mqtts://")):
            return url
        raise ValueError('must be mqtt://host[:port], mqtts://host[:port] or "embedded"')


class JournalConfig(_Strict):
    """``[journal]``: where the journal lives, when it rotates and how long it is kept."""

    path: Path
    rotate_bytes: int | None = pydantic.Field(default=64 * 1024 * 1024, ge=1024 * 1024)
    """Rotate (between rounds) once the live file is this big; None: never by size."""
    rotate_days: int | None = pydantic.Field(default=1, ge=1)
    """Rotate once the live file is this many days old; None: never by age."""
    retention_days: int | None = pydantic.Field(default=90, ge=1)
    """Rotated files older than this, all published, are deleted (R19: at least 90 days)."""
    allow_short_retention: bool = False
    """Allow ``retention_days`` below 90 (a lab table, never a casino floor)."""
    checkpoint_every: int = pydantic.Field(default=10_000, ge=1)
    """Records between recovery checkpoints (``JOURNAL.checkpoint``,
    tablectl.controller.service.checkpoint): at most this many are replayed after a crash."""
    key_file: Path | None = None
    """HMAC-SHA256 key of the keyed anchors and seal macs (tablectl.controller.journal.anchors; R13,
    R15): outside the journal's directory, mode 0600/0400. None: the hash chain proves order, not
    authorship."""
    anchor_every: int = pydantic.Field(default=1000, ge=1, le=1_000_000)
    """With ``key_file``: journal an ``anchor`` record every this many records."""
    anchor_seconds: float = pydantic.Field(default=60.0, ge=1, le=3600)
    """With ``key_file``: and once an unanchored record is this many seconds old."""

    @pydantic.model_validator(mode="after")
    def _key_outside_journal(self) -> JournalConfig:
        # Whoever can rewrite the journal must not be able to read the key beside it.
        if self.key_file is not None:
            folder = self.path.parent.resolve()
            if self.key_file.resolve().is_relative_to(folder):
                raise ValueError(
                    f"key_file {self.key_file} is inside the journal's directory {folder} "
                    f"(journal {self.path}): keep the key elsewhere, e.g. /etc/tablectl/"
                )
        return self

    @pydantic.model_validator(mode="after")
    def _retention_floor(self) -> JournalConfig:
        if (
            self.retention_days is not None
            and self.retention_days < 90
            and not self.allow_short_retention
        ):
            raise ValueError(
                "retention_days: at least 90 (regulatory R19); "
                "set allow_short_retention = true for a lab table"
            )
        return self


class DeviceConfig(pydantic.BaseModel):
    """One ``[[devices]]`` entry. Keys beyond these belong to the driver and are checked by it."""

    model_config = pydantic.ConfigDict(extra="allow", frozen=True)

    id: str = pydantic.Field(pattern=_ID_PATTERN, max_length=64)
    driver: str
    port: str | None = None

    @property
    def options(self) -> dict[str, Any]:
        """The driver-specific keys of this entry."""
        return dict(self.model_extra or {})


class ClockConfig(_Strict):
    """``[clock]``: when the wall clock has stepped (tablectl.controller.service.clock)."""

    max_step_seconds: float = pydantic.Field(default=120.0, ge=1, le=86_400)
    """Seconds the wall clock may move against the boot clock (``CLOCK_BOOTTIME``) before it is
    a step: journaled ``clock_step``, alarmed, retention suspended until confirmed."""


class MetricsConfig(_Strict):
    """``[metrics]``: the opt-in Prometheus endpoint; absent means no endpoint."""

    listen: str | None = pydantic.Field(
        default=None, pattern=r"^(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+):\d{1,5}$"
    )

    _check_listen = pydantic.field_validator("listen")(_port_in_range)


_ROLE_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"

ROLE_ACTIONS = (
    "void",
    "event",
    "fault",
    "clear_fault",
    "confirm",
    "rng",
    "clock_confirm",
    "resend",
    "staff",
)
"""What ``[security] require`` can guard: the commands that change a round or a fault. ``confirm``
is the supervisor's resolution of a pending round (seed-000 GEN-11) entered via ``cmd/event``; each
event type a command can enter maps to one of these
(``tablectl.controller.mqtt.authority.EVENT_ACTIONS``), so ``event`` cannot be used to get around
the others. ``rng`` is a studio RNG's picks (``rng_draw``: lightning numbers, multipliers), which
decide what a result pays: the RNG service's own role, or a supervisor keying them in from the
RNG's display when its link fails. ``clock_confirm`` says the table's clock is right after a step
(tablectl.controller.service.clock): left out of ``require``, the roles that may void.
``resend`` asks a table to publish records again (the floor's archive filling a gap): left out
of ``require``, the ``archive`` role if ``roles`` names one, else nobody (refused)."""

DEFAULT_REQUIRE: Mapping[str, tuple[str, ...]] = {
    "void": ("supervisor",),
    "event": ("dealer", "supervisor"),
    "fault": ("supervisor", "technician"),
    "clear_fault": ("supervisor", "technician"),
    "confirm": ("supervisor",),
    "rng": ("rng", "supervisor"),
    "staff": ("dealer", "supervisor", "technician"),
}
"""Roles per action when ``require`` leaves one out: voids, clears and confirmations are
supervisor decisions (FM/CM, seed-000 GEN-11/12); a dealer keys in a card a scanner missed;
raising or clearing a fault locks or unlocks the table (R14), a supervisor's or technician's
call."""

NEVER_DEALER: frozenset[str] = frozenset({"fault", "clear_fault", "rng", "clock_confirm"})
"""Actions ``require`` may not give the ``dealer`` role: a dealer who could raise a fault could
void the round in play (``void_on_fault``) and lock the table, and one who could clear it could
unlock a table that a device stopped (regulatory R14, R21); one who could enter the RNG's picks
could choose what a result pays."""


class SecurityConfig(_Strict):
    """``[security]``: who may send round-changing commands (see
    :mod:`tablectl.controller.mqtt.security`).

    ``roles`` maps a role name to the file holding its HMAC key (read at start, never here);
    ``require`` maps an action to the role(s) allowed to sign it. Absent section: every command
    that changes a round or a fault is refused (``commands_disabled``); ``insecure_commands =
    true`` (and no roles) accepts them unauthenticated, for labs and demos only (contracts §7).
    """

    roles: dict[str, Path] = pydantic.Field(default_factory=dict)
    insecure_commands: bool = False
    """Accept round- and fault-changing commands without a signature (labs, demos, CI). Loud:
    ``check-config`` and the start log say so; never on a casino floor."""
    require: dict[str, str | tuple[str, ...]] = pydantic.Field(default_factory=dict)
    max_age: float = pydantic.Field(default=30.0, gt=0, le=600)
    """Seconds a signed command's ``ts`` may differ from the table's clock (both ways)."""
    max_nonces: int = pydantic.Field(default=10_000, ge=100, le=1_000_000)
    """Nonces remembered at most (one per accepted command within ``2 * max_age``)."""

    @pydantic.field_validator("roles")
    @classmethod
    def _check_roles(cls, roles: dict[str, Path]) -> dict[str, Path]:
        for name in roles:
            if not re.fullmatch(_ROLE_PATTERN, name):
                raise ValueError(f"role name {name!r} must match {_ROLE_PATTERN}")
        return roles

    @property
    def required(self) -> dict[str, frozenset[str]]:
        """Every action of :data:`ROLE_ACTIONS` with the roles allowed to sign it.

        An action left out of ``require`` gets those of its default roles that are configured,
        so a venue without a ``dealer`` key simply has supervisors key in cards.
        """
        out: dict[str, frozenset[str]] = {}
        for action in ROLE_ACTIONS:
            value = self.require.get(action)
            if value is None and action == "clock_confirm":
                out[action] = out["void"]  # a supervisor's decision, as a void is
            elif value is None and action == "resend":
                out[action] = frozenset({"archive"}) & set(self.roles)
            elif value is None:
                out[action] = frozenset(DEFAULT_REQUIRE[action]) & set(self.roles)
            else:
                out[action] = frozenset((value,) if isinstance(value, str) else value)
        return out

    @pydantic.model_validator(mode="after")
    def _check_require(self) -> SecurityConfig:
        if self.insecure_commands:
            if self.roles or self.require:
                raise ValueError(
                    "insecure_commands = true accepts unsigned commands: remove it, or remove "
                    "roles/require (one or the other)"
                )
            return self
        if not self.roles:
            raise ValueError(
                "roles: name at least one role key file (or insecure_commands = true, labs only)"
            )
        unknown = sorted(set(self.require) - set(ROLE_ACTIONS))
        if unknown:
            raise ValueError(
                f"require: unknown action(s) {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(ROLE_ACTIONS)})"
            )
        for action, roles in self.required.items():
            if action not in self.require:
                if not roles and action in DEFAULT_REQUIRE:
                    wanted = " or ".join(map(repr, DEFAULT_REQUIRE[action]))
                    raise ValueError(
                        f"require.{action} defaults to role {wanted}, which [security] roles "
                        "lacks: add its key file or set require"
                    )
                continue
            if not roles:
                raise ValueError(f"require.{action}: name at least one role")
            if action in NEVER_DEALER and "dealer" in roles:
                why = {"rng": "enter the RNG's picks", "clock_confirm": "confirm the clock"}.get(
                    action, "raise or clear faults"
                )
                defaults = DEFAULT_REQUIRE.get(action, DEFAULT_REQUIRE["void"])
                raise ValueError(
                    f"require.{action}: the dealer role may not {why} "
                    f"(defaults: {' or '.join(defaults)})"
                )
            missing = sorted(roles - set(self.roles))
            if missing:
                raise ValueError(
                    f"require.{action} names role(s) {', '.join(map(repr, missing))} "
                    "that [security] roles lacks"
                )
        return self


DEALER_REQUIRED = "dealer_required"
"""The engine's rule that ``[staff] dealer_required`` sets (:attr:`TableConfig.engine_rules`)."""


class StaffConfig(_Strict):
    """``[staff]``: the people at the table (docs/station.md)."""

    roster: Path
    """The operator's roster (owner-only): ids, names, roles, badge and PIN hashes."""
    dealer_required: bool = True
    """A round opens only with a dealer on duty; without one it is void ``no_dealer``."""


class StationConfig(_Strict):
    """``[station]``: the dealer's screen at the table (``tablectl station``, docs/station.md)."""

    listen: str = pydantic.Field(
        default="127.0.0.1:8090", pattern=r"^(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+):\d{1,5}$"
    )
    id: str = pydantic.Field(default="station", pattern=_ID_PATTERN, max_length=64)
    """Names the station in logs and lockouts (one station per table, usually)."""
    max_pin_failures: int = pydantic.Field(default=5, ge=1, le=100)
    failure_window: float = pydantic.Field(default=300.0, gt=0, le=86_400)
    lockout_seconds: float = pydantic.Field(default=900.0, gt=0, le=86_400)

    _check_listen = pydantic.field_validator("listen")(_port_in_range)


class TableConfig(_Strict):
    """A whole table config file."""

    table: TableSection
    mqtt: MqttConfig = MqttConfig()
    journal: JournalConfig
    rules: dict[str, Any] = pydantic.Field(default_factory=dict)
    betting: BettingConfig = BettingConfig()
    metrics: MetricsConfig = MetricsConfig()
    clock: ClockConfig = ClockConfig()
    security: SecurityConfig | None = None
    staff: StaffConfig | None = None
    station: StationConfig = StationConfig()
    devices: tuple[DeviceConfig, ...] = ()
    source: str = "<memory>"

    @property
    def engine_rules(self) -> dict[str, Any]:
        """``[rules]`` as the engine is built with them: ``[staff] dealer_required`` added."""
        if self.staff is None or not self.staff.dealer_required:
            return dict(self.rules)
        return {**self.rules, DEALER_REQUIRED: True}

    @pydantic.model_validator(mode="after")
    def _unique_device_ids(self) -> TableConfig:
        seen: set[str] = set()
        for dev in self.devices:
            if dev.id in seen:
                raise ValueError(f"device id {dev.id!r} is used twice")
            seen.add(dev.id)
        return self


# --- error messages: one format ----------------------------------------------------------------
#
#   FILE: PROBLEM                    e.g. t.toml: unknown key 'rules.wheel'
#   FILE: devices[i] (id 'wheel', driver 'cammegh-ss2'): PROBLEM
#
# PROBLEM is "unknown key 'K'", "missing key 'K'" or "K: why", K dotted from the section (or from
# the device entry, which is named by position, id and driver: the id is what an operator greps
# for, the position is what a config with two entries of the same id needs).


def device_label(index: int, device_id: object = None, driver: object = None) -> str:
    """How every error names a ``[[devices]]`` entry: ``devices[0] (id 'wheel', driver '…')``.

    ``device_id`` and ``driver`` are left out when they are not strings (an entry too broken to
    have them).
    """
    named = [f"{k} {v!r}" for k, v in (("id", device_id), ("driver", driver)) if isinstance(v, str)]
    return f"devices[{index}]" + (f" ({', '.join(named)})" if named else "")


def device_error(config: TableConfig, index: int, problem: str) -> ConfigError:
    """``FILE: devices[i] (id …, driver …): PROBLEM`` for the ``index``-th device of ``config``."""
    device = config.devices[index]
    where = device_label(index, device.id, device.driver)
    return ConfigError(f"{config.source}: {where}: {problem}")


def _problem(err: ErrorDetails, key: str) -> str:
    if err["type"] == "extra_forbidden":
        return f"unknown key {key!r}"
    if err["type"] == "missing":
        return f"missing key {key!r}"
    # A validator's own ValueError already says what is wrong: pydantic's prefix adds nothing.
    msg = err["msg"].removeprefix("Value error, ") if err["type"] == "value_error" else err["msg"]
    return f"{key}: {msg}" if key else msg


def _raw_device_label(data: Mapping[str, Any], index: int) -> str:
    entries = data.get("devices")
    entry = entries[index] if isinstance(entries, list | tuple) and index < len(entries) else None
    if not isinstance(entry, Mapping):
        return device_label(index)
    return device_label(index, entry.get("id"), entry.get("driver"))


def _describe(
    exc: pydantic.ValidationError,
    source: str,
    section: str = "",
    *,
    where: str = "",
    data: Mapping[str, Any] | None = None,
) -> str:
    """One line in the format above. ``section`` prefixes keys (``rules``); ``where`` names the
    place instead (a device entry); ``data`` (the whole file) lets errors inside ``devices``
    name their entry."""
    places: dict[str, list[str]] = {}
    for err in exc.errors():
        loc, place = [str(p) for p in err["loc"]], where
        raw = err["loc"]
        if not place and data is not None and len(raw) >= 2 and raw[0] == "devices":
            if isinstance(raw[1], int):
                place, loc = _raw_device_label(data, raw[1]), loc[2:]
        elif section:
            loc = [section, *loc]
        places.setdefault(place, []).append(_problem(err, ".".join(loc)))
    text = "; ".join(
        (f"{place}: " if place else "") + "; ".join(problems) for place, problems in places.items()
    )
    return f"{source}: {text}"


def parse_config(data: Mapping[str, Any], source: str = "<memory>") -> TableConfig:
    """Validate a decoded TOML document."""
    try:
        return TableConfig.model_validate({**data, "source": source})
    except pydantic.ValidationError as exc:
        raise ConfigError(_describe(exc, source, data=data)) from None


def load_config(path: str | Path) -> TableConfig:
    """Load and validate one table config file.

    Raises:
        ConfigError: the file is missing, not TOML, or not a valid table config (names key + file).
    """
    path = Path(path)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror or exc}") from None
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:  # arrays or inline tables nested thousands deep
        raise ConfigError(f"{path}: not valid TOML: nested too deeply") from None
    if "source" in data:
        raise ConfigError(f"{path}: unknown key 'source'")
    return parse_config(data, str(path))


Model = TypeVar("Model", bound=pydantic.BaseModel)


def validate_section(
    model: type[Model], data: Mapping[str, Any], *, source: str, section: str
) -> Model:
    """Validate a game's ``[rules]`` against its own strict model (keys named ``rules.…``)."""
    try:
        return model.model_validate(dict(data))
    except pydantic.ValidationError as exc:
        raise ConfigError(_describe(exc, source, section)) from None


def validate_device(model: type[Model], config: TableConfig, index: int) -> Model:
    """Validate the driver keys of ``config.devices[index]`` against the driver's own model.

    Raises:
        ConfigError: in :func:`device_error`'s format (the entry by position, id and driver).
    """
    device = config.devices[index]
    try:
        return model.model_validate(device.options)
    except pydantic.ValidationError as exc:
        where = device_label(index, device.id, device.driver)
        raise ConfigError(_describe(exc, config.source, where=where)) from None

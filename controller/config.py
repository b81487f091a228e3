"""Table configuration (DESIGN §4.2): one TOML file per table, loaded strictly.

One explicit path, no search of several locations: a locked-down table PC has exactly one source
of truth. Unknown keys are errors that name the key and the file. Game- and driver-specific keys
(``[rules]``, extra keys of a ``[[devices]]`` entry) are kept as mappings here and validated by the
engine or driver that owns them, at startup, with the same error style (see
:func:`validate_section`).
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar

import pydantic

from controller.betting import BettingConfig
from controller.errors import ConfigError

__all__ = [
    "DeviceConfig",
    "JournalConfig",
    "MetricsConfig",
    "MqttConfig",
    "SecurityConfig",
    "TableConfig",
    "TableSection",
    "load_config",
    "parse_config",
    "validate_section",
]

_ID_PATTERN = r"^[A-Za-z0-9_-]+$"


class _Strict(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="forbid", frozen=True)


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
    """Records between recovery checkpoints (``JOURNAL.checkpoint``, controller.checkpoint): at
    most this many are replayed after a crash."""

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


class MetricsConfig(_Strict):
    """``[metrics]``: the opt-in Prometheus endpoint; absent means no endpoint."""

    listen: str | None = pydantic.Field(
        default=None, pattern=r"^(\[[0-9A-Fa-f:.]+\]|[^:\[\]]+):\d{1,5}$"
    )


_ROLE_PATTERN = r"^[a-z][a-z0-9_]{0,31}$"

ROLE_ACTIONS = ("void", "event", "clear_fault", "confirm")
"""What ``[security] require`` can guard: the commands that change a round. ``confirm`` is the
supervisor's resolution of a pending round (seed-000 GEN-11) entered via ``cmd/event``; a
``void`` or ``fault_cleared`` entered via ``cmd/event`` needs what ``void``/``clear_fault``
need, so ``event`` cannot be used to get around them."""

DEFAULT_REQUIRE: Mapping[str, tuple[str, ...]] = {
    "void": ("supervisor",),
    "event": ("dealer", "supervisor"),
    "clear_fault": ("supervisor",),
    "confirm": ("supervisor",),
}
"""Roles per action when ``require`` leaves one out: voids, clears and confirmations are
supervisor decisions (FM/CM, seed-000 GEN-11/12); a dealer keys in a card a scanner missed."""


class SecurityConfig(_Strict):
    """``[security]``: who may send round-changing commands (see :mod:`controller.security`).

    ``roles`` maps a role name to the file holding its HMAC key (read at start, never here);
    ``require`` maps an action to the role(s) allowed to sign it. Absent section: commands are
    not authenticated (development and demo only; see ``docs`` and the startup warning).
    """

    roles: dict[str, Path] = pydantic.Field(min_length=1)
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
            if value is None:
                out[action] = frozenset(DEFAULT_REQUIRE[action]) & set(self.roles)
            else:
                out[action] = frozenset((value,) if isinstance(value, str) else value)
        return out

    @pydantic.model_validator(mode="after")
    def _check_require(self) -> SecurityConfig:
        unknown = sorted(set(self.require) - set(ROLE_ACTIONS))
        if unknown:
            raise ValueError(
                f"require: unknown action(s) {', '.join(map(repr, unknown))} "
                f"(known: {', '.join(ROLE_ACTIONS)})"
            )
        for action, roles in self.required.items():
            if action not in self.require:
                if not roles:
                    wanted = " or ".join(map(repr, DEFAULT_REQUIRE[action]))
                    raise ValueError(
                        f"require.{action} defaults to role {wanted}, which [security] roles "
                        "lacks: add its key file or set require"
                    )
                continue
            if not roles:
                raise ValueError(f"require.{action}: name at least one role")
            missing = sorted(roles - set(self.roles))
            if missing:
                raise ValueError(
                    f"require.{action} names role(s) {', '.join(map(repr, missing))} "
                    "that [security] roles lacks"
                )
        return self


class TableConfig(_Strict):
    """A whole table config file."""

    table: TableSection
    mqtt: MqttConfig = MqttConfig()
    journal: JournalConfig
    rules: dict[str, Any] = pydantic.Field(default_factory=dict)
    betting: BettingConfig = BettingConfig()
    metrics: MetricsConfig = MetricsConfig()
    security: SecurityConfig | None = None
    devices: tuple[DeviceConfig, ...] = ()
    source: str = "<memory>"

    @pydantic.model_validator(mode="after")
    def _unique_device_ids(self) -> TableConfig:
        seen: set[str] = set()
        for dev in self.devices:
            if dev.id in seen:
                raise ValueError(f"device id {dev.id!r} is used twice")
            seen.add(dev.id)
        return self


def _describe(exc: pydantic.ValidationError, source: str, section: str = "") -> str:
    parts = []
    for err in exc.errors():
        loc = ".".join(str(p) for p in err["loc"])
        if section:
            loc = f"{section}.{loc}" if loc else section
        if err["type"] == "extra_forbidden":
            parts.append(f"unknown key {loc!r}")
        else:
            parts.append(f"{loc}: {err['msg']}")
    return f"{source}: " + "; ".join(parts)


def parse_config(data: Mapping[str, Any], source: str = "<memory>") -> TableConfig:
    """Validate a decoded TOML document."""
    try:
        return TableConfig.model_validate({**data, "source": source})
    except pydantic.ValidationError as exc:
        raise ConfigError(_describe(exc, source)) from None


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
    """Validate a game's ``[rules]`` or a driver's device keys against its own strict model."""
    try:
        return model.model_validate(dict(data))
    except pydantic.ValidationError as exc:
        raise ConfigError(_describe(exc, source, section)) from None

"""Table configuration (DESIGN §4.2): one TOML file per table, loaded strictly.

One explicit path, no search of several locations: a locked-down table PC has exactly one source
of truth. Unknown keys are errors that name the key and the file. Game- and driver-specific keys
(``[rules]``, extra keys of a ``[[devices]]`` entry) are kept as mappings here and validated by the
engine or driver that owns them, at startup, with the same error style (see
:func:`validate_section`).
"""

from __future__ import annotations

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
    """``[journal]``."""

    path: Path


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


class TableConfig(_Strict):
    """A whole table config file."""

    table: TableSection
    mqtt: MqttConfig = MqttConfig()
    journal: JournalConfig
    rules: dict[str, Any] = pydantic.Field(default_factory=dict)
    betting: BettingConfig = BettingConfig()
    metrics: MetricsConfig = MetricsConfig()
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

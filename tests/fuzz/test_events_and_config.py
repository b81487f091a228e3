"""The event parser and the config loader on arbitrary input: their one error type, or a value.

``parse_event`` takes what ``cmd/event`` and ``tablectl replay`` read from outside, and
``parse_config``/``load_config`` take what an operator typed: both must answer with a clear
error (EventFormatError / ConfigError) and nothing else, whatever the shape, type or depth.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from tablectl.controller.config import TableConfig, load_config, parse_config
from tablectl.controller.core.errors import ConfigError, EventFormatError
from tablectl.controller.core.events import EVENT_TYPES, event_from_json, event_to_dict, parse_event
from tests.fuzz.common import fuzz, json_values, toml_values

_FIELDS = sorted(
    {name for cls in EVENT_TYPES.values() for name in cls.__dataclass_fields__} - {"type"}
)


@st.composite
def event_like(draw: Any) -> dict[str, Any]:
    """An object that looks like an event: a known (or unknown) type and plausible keys."""
    kind = draw(st.sampled_from(sorted(EVENT_TYPES)) | st.text(max_size=10))
    keys = draw(st.lists(st.sampled_from(_FIELDS) | st.text(max_size=6), max_size=5))
    return {"type": kind, **{key: draw(json_values) for key in keys}}


@fuzz(400)
@given(st.one_of(json_values, event_like()))
def test_parse_event_gives_an_event_or_event_format_error(obj: Any) -> None:
    try:
        event = parse_event(obj)
    except EventFormatError as exc:
        error = str(exc)
    else:
        # What parses is a proper event that serializes back to the same type.
        assert event_to_dict(event)["type"] == obj["type"]
        return
    assert error


@fuzz(200)
@given(
    st.one_of(
        st.binary(max_size=200),
        st.text(max_size=200),
        st.sampled_from([b"[" * 100_000, b'{"type": "card", "card": ' + b"[" * 50_000]),
    )
)
def test_event_from_json_gives_an_event_or_event_format_error(line: bytes | str) -> None:
    try:
        parse_result = event_from_json(line)
    except EventFormatError:
        return
    assert parse_result.type in EVENT_TYPES


_SECTIONS = ["table", "mqtt", "journal", "rules", "betting", "metrics", "security", "devices"]
_KEYS = [
    "id",
    "game",
    "url",
    "topic_prefix",
    "client_id",
    "keepalive",
    "reconnect_max_delay",
    "embedded_listen",
    "ca_file",
    "cert_file",
    "key_file",
    "username",
    "password_file",
    "path",
    "mode",
    "open_seconds",
    "listen",
    "roles",
    "require",
    "max_age",
    "max_nonces",
    "driver",
    "port",
    "source",
]


@st.composite
def config_like(draw: Any) -> dict[str, Any]:
    """A TOML document with the config's sections and keys and arbitrary values."""
    doc: dict[str, Any] = {}
    for section in draw(st.lists(st.sampled_from(_SECTIONS) | st.text(max_size=6), max_size=6)):
        keys = draw(st.lists(st.sampled_from(_KEYS) | st.text(max_size=6), max_size=5))
        body = {key: draw(toml_values) for key in keys}
        doc[section] = [body] if section == "devices" else body
    if draw(st.booleans()):  # mostly-valid documents reach the deeper validators
        doc.setdefault("table", {"id": "T1", "game": "roulette"})
        doc.setdefault("journal", {"path": "j.sqlite"})
    return doc


@fuzz(400)
@given(st.one_of(config_like(), st.dictionaries(st.text(max_size=8), toml_values, max_size=4)))
def test_parse_config_gives_a_config_or_config_error(doc: dict[str, Any]) -> None:
    try:
        config = parse_config(doc, "fuzz.toml")
    except ConfigError as exc:
        error = str(exc)
    else:
        assert isinstance(config, TableConfig)
        return
    assert error.startswith("fuzz.toml: ")


@fuzz(200)
@given(
    st.one_of(
        st.binary(max_size=300),
        st.text(alphabet='[]{}=,."\n abc123', max_size=300).map(str.encode),
        st.sampled_from([b"a = " + b"[" * 50_000, b"a = " + b"{b = " * 50_000]),
    )
)
def test_load_config_on_any_file_gives_a_config_or_config_error(
    tmp_path_factory: Any, raw: bytes
) -> None:
    path = Path(tmp_path_factory.getbasetemp()) / "fuzz.toml"
    path.write_bytes(raw)
    try:
        load_config(path)
    except ConfigError as exc:
        error = str(exc)
    else:  # pragma: no cover - a random file that is a valid config
        tomllib.loads(raw.decode())
        return
    assert str(path) in error

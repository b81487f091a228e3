"""A ``--dsn`` that is not one fails in one line, and never shows its password (pure: no server).

libpq quotes what it cannot read — the whole URL, a parameter's value, the word after an unquoted
password's space — so its words are scrubbed, and a DSN it cannot read is shown redacted.
"""

from __future__ import annotations

import pytest

from tablectl.controller.archive.db import (
    ArchiveConfigError,
    ArchiveError,
    check_dsn,
    describe_dsn,
    redact_dsn,
)
from tablectl.controller.core.errors import ConfigError, ControllerError

BAD = [
    # (DSN, what the one line says)
    ("postgresql://tablectl:s3cret@[::1", 'looking for matching "]" in IPv6 host address'),
    ("postgresql://tablectl:s3cret@[::1/archive", "IPv6 host address"),
    ("nonsense=1 password=s3cret", 'invalid connection option "nonsense"'),
    ("password=my s3cret host=db", 'missing "=" after "***"'),
    ("PGPASSWORD=s3cret host=db", 'invalid connection option "PGPASSWORD"'),
    ("host=db password='s3cret", "unterminated quoted string"),
    ("postgresql://u@db/archive?password=s3%zzcret", 'invalid percent-encoded token: "***"'),
    ("postgresql://u:s3%00cret@db/archive", 'forbidden value %00 in percent-encoded value: "***"'),
    ("postgresql://u:s3cret@db/archive?nonsense=1", 'invalid URI query parameter: "nonsense"'),
    ("mysql://u:s3cret@db/archive", "scheme must be postgresql://"),
]


@pytest.mark.parametrize(("dsn", "message"), BAD, ids=[b[0] for b in BAD])
def test_a_bad_dsn_is_one_config_error_without_its_password(dsn: str, message: str) -> None:
    with pytest.raises(ArchiveConfigError) as caught:
        check_dsn(dsn)
    text = str(caught.value)
    assert message in text
    assert text.startswith("--dsn ")
    assert "\n" not in text
    assert "s3" not in text  # nor any part of the password ("s3%zzcret", "s3%00cret")
    assert "cret" not in text


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://archive:s3cret@db:6432/floor?sslmode=require", "db:6432/floor"),
        ("host=db port=6432 dbname=floor user=archive password=s3cret", "db:6432/floor"),
        ("nonsense=1 password=s3cret", "'nonsense=1 password=***'"),
        ("password=my s3cret host=db", "'password=*** host=db'"),
        ("PGPASSWORD=s3cret host=db", "'PGPASSWORD=*** host=db'"),
        ("postgresql://u:s3cret@[::1", "'postgresql://u:***@[::1'"),
        ("postgresql://u@db?password=s3cret&x", "'postgresql://u@db?password=***&x'"),
    ],
)
def test_a_dsn_is_described_without_its_password(dsn: str, shown: str) -> None:
    assert describe_dsn(dsn) == shown


def test_redaction_keeps_what_is_not_secret() -> None:
    assert redact_dsn("postgresql://archive@db/floor") == "postgresql://archive@db/floor"
    assert redact_dsn("host=db sslpassword=x sslmode=require") == (
        "host=db sslpassword=*** sslmode=require"
    )
    assert redact_dsn("host=db password='a b' user=x") == "host=db password=*** user=x"


def test_a_good_dsn_passes_and_the_errors_are_the_controllers() -> None:
    assert check_dsn(" postgresql://archive@db/floor ") == "postgresql://archive@db/floor"
    assert check_dsn("host=db dbname=floor") == "host=db dbname=floor"
    assert issubclass(ArchiveConfigError, ConfigError)
    assert issubclass(ArchiveError, ControllerError)

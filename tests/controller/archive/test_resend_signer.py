"""The archive signs its ``cmd/resend`` requests as a role, the way a table checks them.

No broker here: the table side is the real :class:`CommandAuthority` built from a real
``[security]`` section; tests/integration/test_floor_acl.py runs the whole floor.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import pytest

from tablectl.controller.archive.upkeep import ResendSigner
from tablectl.controller.config import SecurityConfig
from tablectl.controller.core.errors import ConfigError
from tablectl.controller.mqtt.authority import CommandAuthority
from tablectl.controller.tools import archive

KEY = b"a" * 32


def _authority() -> CommandAuthority:
    roles = {"supervisor": "/k/s.key", "archive": "/k/a.key"}
    required = SecurityConfig.model_validate({"roles": roles}).required
    return CommandAuthority({"supervisor": b"s" * 32, "archive": KEY}, required, table="ROU-01")


def test_a_signed_resend_is_what_a_secured_table_accepts() -> None:
    signer = ResendSigner(role="archive", key=KEY, by="archive-1")
    request = signer.sign({"id": "r1", "from_seq": 1, "to_seq": 9}, "ROU-01")
    verdict = _authority().check("resend", request, time.time())
    assert verdict.accepted, verdict.reason
    assert (verdict.role, verdict.by) == ("archive", "archive-1")
    # Signed for another table, or unsigned: refused.
    other = signer.sign({"id": "r2", "from_seq": 1, "to_seq": 9}, "ROU-02")
    assert not _authority().check("resend", other, time.time()).accepted
    unsigned = {"id": "r3", "from_seq": 1, "to_seq": 9}
    assert not _authority().check("resend", unsigned, time.time()).accepted


def test_the_archive_reads_its_resend_key_strictly(tmp_path: Path) -> None:
    parser = argparse.ArgumentParser()
    archive.add_arguments(parser)
    key = tmp_path / "archive.key"
    key.write_bytes(KEY + b"\n")
    key.chmod(0o600)
    args = parser.parse_args(["--dsn", "postgresql:///x", "--resend-key", str(key)])
    signer = archive._resend_signer(args)
    assert signer is not None
    assert (signer.role, signer.by) == ("archive", "archive")
    key.chmod(0o644)  # readable by others: refused, naming the file
    with pytest.raises(ConfigError, match=r"archive\.key"):
        archive._resend_signer(args)

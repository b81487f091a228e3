"""The floor's broker ACL, run (issue 26, "the deployment story"): a table cannot publish as
another, readers cannot publish at all, the archive publishes only ``cmd/resend``.

The broker is Mosquitto running the shipped ``config/mosquitto-floor.example.conf`` with
``config/mosquitto-floor-acl.example`` (paths and ports substituted, persistence off), the
password file made with ``mosquitto_passwd -b``, the TLS files with ``openssl``. Two real tables
play on it in this process (:func:`open_table`): ``ROU-01`` logs in with a password, ``ROU-02``
with a client certificate whose CN is its id (``use_identity_as_username``); both with
``[security]`` (a supervisor and the archive role) and a keyed journal.

Mosquitto drops a denied PUBLISH without a word (an MQTT 3.1.1 sender still gets its PUBACK), so
what is checked is absence: each forging client awaits the broker's PUBACK for every forgery,
then an allowed **marker** is published; once both readers (the archive's login, which reads the
whole prefix, and a dashboard's) have the marker, anything the broker had let through would have
reached them before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import ssl
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from tablectl.controller.config import TableConfig, parse_config
from tablectl.controller.mqtt.security import sign_command
from tablectl.controller.service.app import TableApp, open_table
from tests.support.events import roulette_spin
from tests.support.mosquitto import find_mosquitto
from tests.support.mqtt import Received, Subscriber
from tests.support.tls import Pki, TlsMosquitto, find_openssl, make_pki

pytestmark = [pytest.mark.broker, pytest.mark.timeout(90)]

CONFIG = Path(__file__).resolve().parents[2] / "config"
FLOOR_CONF = CONFIG / "mosquitto-floor.example.conf"
FLOOR_ACL = CONFIG / "mosquitto-floor-acl.example"

A, B = "ROU-01", "ROU-02"
"""Two tables of the example ACL's pit: A logs in with a password, B with a certificate."""
PASSWORDS = {
    A: "rou-01-pw",
    "pit-1": "pit-pw",
    "archive": "archive-pw",
    "dashboard": "dashboard-pw",
    "monitor": "monitor-pw",
}
SUPERVISOR_KEY = "5" * 64
ARCHIVE_KEY = "a" * 64
BOARD_FILTERS = [
    *(f"tablectl/+/{leaf}" for leaf in ("status", "events", "outcome", "alarms")),
    "tablectl/_archive/+/+",  # the archivers' status, as the dashboard shows it
]


# --- the example file itself -------------------------------------------------------------------


def _acl_users(text: str) -> dict[str, list[str]]:
    """The example ACL's ``user`` blocks: user → its ``topic`` lines."""
    users: dict[str, list[str]] = {}
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("user "):
            current = users.setdefault(line.split(None, 1)[1], [])
        elif line.startswith("pattern "):
            current = None
        elif line.startswith("topic ") and current is not None:
            current.append(line)
    return users


def test_every_user_denies_the_topics_a_table_of_its_name_would_have() -> None:
    # Mosquitto applies pattern lines to every user: a user without this deny could write
    # tablectl/<its name>/# and pose as a table of that name (the dashboard, as "dashboard").
    text = FLOOR_ACL.read_text(encoding="utf-8")
    patterns = [line for line in text.splitlines() if line.startswith("pattern ")]
    assert patterns == ["pattern write tablectl/%u/#", "pattern read tablectl/%u/cmd/+"]
    users = _acl_users(text)
    assert {"pit-1", "archive", "dashboard", "monitor"} <= set(users)
    missing = [
        user for user, lines in users.items() if f"topic deny tablectl/{user}/#" not in lines
    ]
    assert missing == []
    # Readers read; the archive writes cmd/resend and its own topics, nothing of a table's.
    assert not [
        line for line in users["dashboard"] if not line.startswith(("topic read", "topic deny"))
    ]
    archive_writes = {
        line.split()[-1] for line in users["archive"] if line.startswith("topic write")
    }
    assert archive_writes == {
        "tablectl/+/cmd/resend",
        "tablectl/_archive/+/status",
        "tablectl/_archive/+/alarms",
    }


# --- the broker ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    if find_openssl() is None:
        pytest.skip("openssl CLI not found")
    return make_pki(tmp_path_factory.mktemp("pki"), clients=(B, "intruder"))


@pytest.fixture
def broker(tmp_path: Path, pki: Pki) -> Iterator[TlsMosquitto]:
    if find_mosquitto() is None:
        pytest.skip("mosquitto binary not found (apt-get install mosquitto)")
    if shutil.which("mosquitto_passwd") is None and not Path("/usr/bin/mosquitto_passwd").exists():
        pytest.skip("mosquitto_passwd not found")
    with TlsMosquitto(
        tmp_path / "broker",
        pki,
        users=PASSWORDS,
        acl=FLOOR_ACL.read_text(encoding="utf-8"),
        config=FLOOR_CONF,
    ) as process:
        yield process


def _login(broker: TlsMosquitto, user: str) -> dict[str, Any]:
    """``aiomqtt.Client`` keywords: a password user on ``port``, a certificate on ``cert_port``."""
    context = ssl.create_default_context(cafile=str(broker.pki.ca))
    if user in PASSWORDS:
        return {
            "port": broker.port,
            "tls_context": context,
            "username": user,
            "password": PASSWORDS[user],
        }
    cert, key = broker.pki.clients[user]
    context.load_cert_chain(cert, key)
    return {"port": broker.cert_port, "tls_context": context}


@contextlib.asynccontextmanager
async def _client(broker: TlsMosquitto, user: str) -> AsyncIterator[aiomqtt.Client]:
    options = _login(broker, user)
    async with aiomqtt.Client(broker.host, options.pop("port"), timeout=5, **options) as client:
        yield client


def _reader(broker: TlsMosquitto, user: str, filters: str | Sequence[str]) -> Subscriber:
    options = _login(broker, user)
    return Subscriber(broker.host, options.pop("port"), filters, options=options)


# --- the tables ---------------------------------------------------------------------------------


def _secret(path: Path, text: str) -> Path:
    path.write_text(text + "\n", encoding="utf-8")
    path.chmod(0o400)
    return path


def _table_config(broker: TlsMosquitto, table: str, tmp_path: Path) -> TableConfig:
    home = tmp_path / table  # secrets here, the journal in a folder of its own
    (home / "journal").mkdir(parents=True)
    mqtt: dict[str, Any] = {"topic_prefix": "tablectl", "ca_file": str(broker.pki.ca)}
    if table in PASSWORDS:
        mqtt |= {"url": f"mqtts://{broker.host}:{broker.port}", "username": table}
        mqtt["password_file"] = str(_secret(home / "mqtt.password", PASSWORDS[table]))
    else:
        cert, key = broker.pki.clients[table]
        mqtt |= {"url": f"mqtts://{broker.host}:{broker.cert_port}"}
        mqtt |= {"cert_file": str(cert), "key_file": str(key)}
    roles = {
        "supervisor": str(_secret(home / "supervisor.key", SUPERVISOR_KEY)),
        "archive": str(_secret(home / "archive.key", ARCHIVE_KEY)),
    }
    return parse_config(
        {
            "table": {"id": table, "game": "roulette"},
            "mqtt": {**mqtt, "reconnect_max_delay": 0.5},
            "journal": {
                "path": str(home / "journal" / "journal.sqlite"),
                "key_file": str(_secret(home / "journal.key", "j" * 64)),
                "anchor_every": 4,
            },
            "security": {"roles": roles},
        },
        f"<{table}>",
    )


@dataclass
class Floor:
    broker: TlsMosquitto
    tables: dict[str, TableApp]
    floor: Subscriber
    """The archive's login on ``tablectl/#``: everything of every table."""
    board: Subscriber
    """A dashboard's login on what a dashboard reads."""

    async def play(self, table: str, number: int) -> None:
        """One spin of ``table``, waited for on the floor reader (its outcome)."""
        app = self.tables[table]
        for event in roulette_spin(number):
            await app.runner.queue.submit(event)
        await self.floor.wait_for(
            lambda m: (
                m.topic == f"tablectl/{table}/outcome" and m.json()["result"]["number"] == number
            ),
            timeout=5,
        )

    async def mark(self, n: int) -> None:
        """An allowed message (table A's own alarms topic) that both readers must see: whatever
        was published before it and allowed reached them before it."""
        async with _client(self.broker, A) as client:
            await client.publish(f"tablectl/{A}/alarms", json.dumps({"marker": n}), qos=1)
        for reader in (self.floor, self.board):
            await reader.wait_for(lambda m: m.payload == json.dumps({"marker": n}).encode())

    def forged(self) -> list[Received]:
        return [m for r in (self.floor, self.board) for m in r.messages if b"forged" in m.payload]


@pytest.fixture
async def floor(broker: TlsMosquitto, tmp_path: Path) -> AsyncIterator[Floor]:
    async with contextlib.AsyncExitStack() as stack:
        floor_reader = await stack.enter_async_context(_reader(broker, "archive", "tablectl/#"))
        board = await stack.enter_async_context(_reader(broker, "dashboard", BOARD_FILTERS))
        tables: dict[str, TableApp] = {}
        tasks: list[asyncio.Task[None]] = []
        for table in (A, B):
            app = await stack.enter_async_context(
                open_table(_table_config(broker, table, tmp_path))
            )
            tasks.append(asyncio.create_task(app.runner.run()))
            tables[table] = app
        try:
            async with asyncio.timeout(10):
                for app in tables.values():
                    await app.publisher.wait_connected()
            yield Floor(broker, tables, floor_reader, board)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)


def _table_topics(table: str) -> list[str]:
    """Every topic a table writes, as another user would forge it."""
    leaves = ("events", "outcome", "status", "state", "alarms", "anchor", "devices/wheel")
    replies = ("cmd/status/reply", "cmd/void/reply", "cmd/resend/reply")
    return [f"tablectl/{table}/{leaf}" for leaf in (*leaves, *replies)]


def _last_event(table: str, seq: int) -> Callable[[Received], bool]:
    """Matches ``table``'s record ``seq`` on ``events``."""
    return lambda m: m.topic == f"tablectl/{table}/events" and m.json()["seq"] == seq


async def _forge(client: aiomqtt.Client, topics: Sequence[str]) -> None:
    for topic in topics:
        # A record as a table would publish it, with the seq of issue 26's forged outcomes.
        body = {"forged": True, "table": topic.split("/")[1], "seq": 10**9, "type": "outcome"}
        await client.publish(topic, json.dumps(body), qos=1)  # PUBACK: the broker has judged it


# --- the tests ----------------------------------------------------------------------------------


async def test_a_table_cannot_publish_as_another(floor: Floor) -> None:
    await floor.play(A, 17)
    await floor.play(B, 4)
    # A's password and B's certificate each forge everything of the other table, and pose as an
    # archiver; B also commands A.
    async with _client(floor.broker, A) as rogue:
        await _forge(
            rogue, [*_table_topics(B), f"tablectl/{B}/cmd/void", "tablectl/_archive/a/status"]
        )
    async with _client(floor.broker, B) as rogue:
        await _forge(rogue, [*_table_topics(A), f"tablectl/{A}/cmd/void"])
    # A certificate of the site CA whose CN is no table and no user: the pattern gives it
    # tablectl/intruder/#, a table of that name, and nothing of the real tables.
    async with _client(floor.broker, "intruder") as rogue:
        await _forge(rogue, _table_topics(A))
    await floor.mark(1)
    assert floor.forged() == []
    # The tables' own records went through: the pattern covers every topic a table writes,
    # anchors included (the per-topic example ACL of a table host once left them out).
    for table in (A, B):
        seen = {
            m.topic.rsplit("/", 1)[-1]
            for m in floor.floor.messages
            if m.topic.startswith(f"tablectl/{table}/")
        }
        assert {"status", "state", "events", "outcome", "anchor"} <= seen


async def test_a_table_reads_only_its_own_commands(floor: Floor) -> None:
    async with (
        _reader(floor.broker, A, "tablectl/#") as nosy,
        _reader(floor.broker, "pit-1", [f"tablectl/{t}/cmd/status/reply" for t in (A, B)]) as pit,
        _client(floor.broker, "pit-1") as commands,
    ):
        for table in (B, A):
            await commands.publish(f"tablectl/{table}/cmd/status", json.dumps({"id": table}), qos=1)
        # The pit commands both tables and reads both replies ...
        await pit.wait_until(lambda ms: {m.json()["id"] for m in ms} == {A, B}, timeout=5)
        await nosy.wait_for(lambda m: m.topic == f"tablectl/{A}/cmd/status")
        await floor.play(B, 9)
        await floor.mark(2)
    # ... while A's credentials, subscribed to everything, got A's command and nothing of B.
    assert {m.topic.split("/")[1] for m in nosy.messages} == {A}
    assert {m.topic for m in nosy.messages} == {f"tablectl/{A}/cmd/status"}


async def test_readers_write_nothing_and_the_archive_only_resend(floor: Floor) -> None:
    await floor.play(A, 32)
    # A dashboard and monitoring write nothing: no table's topic, no command, no archiver's status,
    # and not the table their own name would be (Mosquitto's patterns apply to every user).
    for user in ("dashboard", "monitor"):
        async with _client(floor.broker, user) as reader:
            await _forge(
                reader,
                [
                    *_table_topics(A),
                    f"tablectl/{A}/cmd/void",
                    f"tablectl/{A}/cmd/resend",
                    f"tablectl/{user}/status",
                    f"tablectl/{user}/outcome",
                    "tablectl/_archive/arch-1/status",
                ],
            )
    # The pit may command its tables, not write their records or forge their replies.
    async with _client(floor.broker, "pit-1") as pit:
        await _forge(pit, [*_table_topics(A), "tablectl/pit-1/status"])
    # The archive asks for records again and says its own status; nothing else.
    async with _client(floor.broker, "archive") as archive:
        await _forge(
            archive,
            [*_table_topics(A), f"tablectl/{A}/cmd/void", f"tablectl/{A}/cmd/event"],
        )
        await _forge(archive, ["tablectl/archive/status", "tablectl/archive/outcome"])
        await archive.publish("tablectl/_archive/arch-1/status", b'{"state":"online"}', qos=1)
        await archive.subscribe(f"tablectl/{A}/cmd/resend/reply", qos=1)
        unsigned = {"id": "u1", "from_seq": 1, "to_seq": 3}
        await archive.publish(f"tablectl/{A}/cmd/resend", json.dumps(unsigned), qos=1)
        signed = sign_command(
            {"id": "s1", "from_seq": 1, "to_seq": 3},
            verb="resend",
            table=A,
            role="archive",
            key=ARCHIVE_KEY.encode(),
            by="arch-1",
        )
        await archive.publish(f"tablectl/{A}/cmd/resend", json.dumps(signed), qos=1)
        replies: dict[str, Any] = {}
        async with asyncio.timeout(5):
            async for message in archive.messages:
                assert isinstance(message.payload, bytes)
                reply = json.loads(message.payload)
                replies[reply["id"]] = reply
                if len(replies) == 2:
                    break
    await floor.mark(3)
    assert floor.forged() == []
    assert not [
        m for m in floor.floor.messages if "/cmd/void" in m.topic or "/cmd/event" in m.topic
    ]
    # The ACL lets the archive ask; the table still wants the archive role's signature.
    assert (replies["u1"]["ok"], replies["u1"]["code"]) == (False, "unauthorised")
    assert (replies["s1"]["ok"], replies["s1"]["count"]) == (True, 3)
    await floor.board.wait_for(lambda m: m.topic == "tablectl/_archive/arch-1/status")


async def test_a_packet_over_the_bound_closes_its_sender(floor: Floor) -> None:
    # max_packet_size: a table's own credentials, its own topic, 300 KiB.
    with contextlib.suppress(aiomqtt.MqttError):
        async with _client(floor.broker, A) as big:
            await big.publish(
                f"tablectl/{A}/events", b'{"forged": "' + b"x" * 300_000 + b'"}', qos=1
            )
    await floor.mark(4)
    assert floor.forged() == []


async def test_both_tables_play_on_and_their_streams_are_their_journals(floor: Floor) -> None:
    for n, number in enumerate((7, 0, 36)):
        async with _client(floor.broker, A if n % 2 else B) as rogue:
            await _forge(rogue, _table_topics(B if n % 2 else A))
        await floor.play(A, number)
        await floor.play(B, (number + 1) % 37)
    await floor.mark(5)
    assert floor.forged() == []
    for table, app in floor.tables.items():
        await floor.floor.wait_for(_last_event(table, app.journal.last_seq))
        published = {
            m.json()["seq"]: m.json()["hash"] for m in floor.floor.on(f"tablectl/{table}/events")
        }
        journaled = {r["seq"]: r["hash"] for r in app.journal.records()}
        assert published == journaled
        outcomes = [m.json() for m in floor.floor.on(f"tablectl/{table}/outcome")]
        assert {o["table"] for o in outcomes} == {table}


async def test_watch_logs_in_to_the_floor_broker(floor: Floor, tmp_path: Path) -> None:
    """``tablectl watch`` takes the broker login the dashboard and the archive take (issue 26):
    with the dashboard's user it shows the tables; anonymous, the floor broker refuses it."""
    url = f"mqtts://{floor.broker.host}:{floor.broker.port}"
    password = _secret(tmp_path / "dashboard.pw", PASSWORDS["dashboard"])
    watch = [sys.executable, "-m", "tablectl", "watch", "--json", "--table", A, "--url", url]
    login = ["--username", "dashboard", "--password-file", str(password)]
    login += ["--ca-file", str(floor.broker.pki.ca)]
    process = await asyncio.create_subprocess_exec(
        *watch, *login, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE
    )
    assert process.stdout is not None
    try:
        async with asyncio.timeout(20):
            while True:
                line = await process.stdout.readline()
                assert line, (await process.communicate())[1].decode()
                if json.loads(line)["topic"] == f"tablectl/{A}/status":
                    break
    finally:
        process.terminate()
        await process.wait()
    anonymous = await asyncio.create_subprocess_exec(
        *watch, "--ca-file", str(floor.broker.pki.ca), stderr=asyncio.subprocess.PIPE
    )
    async with asyncio.timeout(20):
        _, err = await anonymous.communicate()
    assert anonymous.returncode == 1
    assert err.decode().startswith("tablectl watch: cannot reach"), err
    assert b"ot authori" in err, err  # the broker's own reason: Not authorized
    assert err.count(b"\n") == 1

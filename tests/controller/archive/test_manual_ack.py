"""The archive's one reach past aiomqtt's public API (paho's manual ack) holds for the aiomqtt
installed, and says so plainly when a release moves what it reaches for."""

from __future__ import annotations

import aiomqtt
import paho.mqtt.client as paho
import pytest

from tablectl.controller.archive.consumer import paho_client


async def test_the_installed_aiomqtt_keeps_a_paho_client() -> None:
    client = aiomqtt.Client("127.0.0.1", 1883)  # not connected: nothing goes on the wire
    inner = paho_client(client)
    assert isinstance(inner, paho.Client)
    inner.manual_ack_set(True)  # what the archiver does before connecting


async def test_a_moved_paho_client_is_named_not_an_attribute_error() -> None:
    client = aiomqtt.Client("127.0.0.1", 1883)
    object.__setattr__(client, "_client", None)
    with pytest.raises(RuntimeError, match="manual acknowledgement"):
        paho_client(client)

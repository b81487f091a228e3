"""Studio dice tables whose shaker and camera are services on an MQTT broker (``mqtt-dice``).

Wiring: ``docs/protocols/dice-mqtt.md``. ``messages`` (pure codec, both ends), ``interpreter``
(the cycle, pure), ``driver`` (the broker). Importing this package loads no MQTT client.
"""

from __future__ import annotations

__all__: list[str] = []

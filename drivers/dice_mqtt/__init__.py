"""Studio dice tables whose shaker and camera are services on an MQTT broker (registry
``mqtt-dice``).

The wiring is documented in ``docs/protocols/dice-mqtt.md``.
:mod:`tablectl.drivers.dice_mqtt.messages` is the pure codec (both ends, every shape
configurable), :mod:`tablectl.drivers.dice_mqtt.interpreter` runs the table's cycle over it (pure,
time passed in), and :mod:`tablectl.drivers.dice_mqtt.driver` binds both to a broker. Importing
this package loads no MQTT client and no event loop.
"""

from __future__ import annotations

__all__: list[str] = []

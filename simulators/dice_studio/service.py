"""Play a :class:`~tablectl.simulators.dice_studio.studio.SimDiceStudio` on a real broker.

The model decides everything; this only moves messages through the production
:class:`~tablectl.drivers.transports.mqtt.MqttLink` and waits on the injected clock for the next
planned word or command. A dropped connection is retried every ``reconnect_delay``; the
``disconnect`` fault closes the link itself until the model is back.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from tablectl.drivers.clock import SYSTEM_CLOCK, Clock
from tablectl.drivers.errors import DriverInitError, TransportClosedError
from tablectl.drivers.transports.mqtt import MqttLink
from tablectl.drivers.transports.pubsub import BrokerEndpoint, TopicMessage
from tablectl.simulators.dice_studio.studio import SimDiceStudio


class StudioService:
    """One studio model on one broker until cancelled.

    ``connections`` (successful connects, for a test to wait on), ``connected`` and ``failures``
    describe the link.
    """

    def __init__(
        self,
        model: SimDiceStudio,
        endpoint: BrokerEndpoint,
        *,
        clock: Clock = SYSTEM_CLOCK,
        client_id: str | None = None,
        reconnect_delay: float = 0.5,
    ) -> None:
        self.model = model
        self.endpoint = endpoint
        self.clock = clock
        self.client_id = client_id
        self.reconnect_delay = reconnect_delay
        self.connections = 0
        self.connected = False
        self.failures = 0
        self._drops = 0  # the model's drops this service has acted on

    async def run(self, on_ready: Callable[[str], None] | None = None) -> None:
        """Serve until cancelled; ``on_ready(url)`` after every successful connect."""
        while True:
            link = MqttLink(self.endpoint, self.model.topics, client_id=self.client_id)
            try:
                await link.open()
            except DriverInitError:
                self.failures += 1
                await self.clock.sleep(self.reconnect_delay)
                continue
            self.connections += 1
            self.connected = True
            try:
                if on_ready is not None:
                    on_ready(self.endpoint.url)
                await self._serve(link)
            except TransportClosedError:
                pass
            finally:
                self.connected = False
                await link.close()
            if self._drops < self.model.drops:
                self._drops = self.model.drops
                await self._stay_away()
            else:
                await self.clock.sleep(self.reconnect_delay)

    async def _stay_away(self) -> None:
        """Off the broker (``disconnect``): the studio goes on with what it planned, and what
        it says meanwhile is lost, until it is back."""
        while self.model.offline(now := self.clock.now()):
            due = self.model.next_due  # at the latest, the time it is back
            await self.clock.sleep(max(0.0, (due if due is not None else now) - now))
            if self.model.offline(self.clock.now()):
                self.model.advance(self.clock.now())

    async def _serve(self, link: MqttLink) -> None:
        """One connection: returns when the model drops off the broker; raises
        :class:`TransportClosedError` when the broker goes away."""
        reader: asyncio.Future[TopicMessage] | None = None
        try:
            while True:
                now = self.clock.now()
                await self._publish(link, self.model.advance(now))
                if self._drops < self.model.drops:
                    return  # the disconnect fault: off the broker
                if reader is None:
                    reader = asyncio.ensure_future(link.recv())
                due = self.model.next_due
                timer = (
                    asyncio.ensure_future(self.clock.sleep(due - now)) if due is not None else None
                )
                waiting: set[asyncio.Future[Any]] = {reader}
                if timer is not None:
                    waiting.add(timer)
                try:
                    await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if timer is not None:
                        timer.cancel()
                if reader.done():
                    message = reader.result()
                    reader = None
                    said = self.model.receive(message.topic, message.payload, self.clock.now())
                    await self._publish(link, said)
        finally:
            if reader is not None:
                reader.cancel()
                await asyncio.gather(reader, return_exceptions=True)

    @staticmethod
    async def _publish(link: MqttLink, messages: list[TopicMessage]) -> None:
        for message in messages:
            await link.send(message)

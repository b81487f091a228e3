"""A simulated ACME shoe on a TCP port: deals the given cards, one line each (:func:`encode`).

``python -m tablectl_acme.simulator --port 0 AS KH 9D`` prints ``READY tcp HOST:PORT`` and deals
to the first client that connects (what a ``socket://`` port in a table config reaches).
"""

from __future__ import annotations

import argparse
import asyncio

from tablectl_acme.protocol import Card, Empty, encode


async def serve(cards: list[str], port: int, interval: float) -> None:
    done = asyncio.Event()

    async def deal(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Not at once: pyserial's open() discards input already waiting (reset_input_buffer), as
        # a real port does; a real shoe's first card comes when the dealer draws it.
        await asyncio.sleep(max(interval, 0.5))
        for count, card in enumerate(cards, 1):
            writer.write(encode(Card(card, count)))
            await writer.drain()
            await asyncio.sleep(interval)
        writer.write(encode(Empty(len(cards))))
        await writer.drain()
        done.set()
        await asyncio.sleep(3600)  # the shoe stays connected, silent, until it is stopped

    server = await asyncio.start_server(deal, "127.0.0.1", port)
    host, bound = server.sockets[0].getsockname()[:2]
    print(f"READY tcp {host}:{bound}", flush=True)
    async with server:
        await server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m tablectl_acme.simulator")
    parser.add_argument("--port", type=int, default=0, help="TCP port (default 0: a free one)")
    parser.add_argument("--interval", type=float, default=0.2, help="seconds between cards")
    parser.add_argument("cards", nargs="+", help="cards to deal, e.g. AS KH 9D")
    args = parser.parse_args()
    asyncio.run(serve(args.cards, args.port, args.interval))


if __name__ == "__main__":
    main()

"""``diag probe DEVICE``: identify one configured device and show its live decoded traffic, and
what the service would do (never done), until Ctrl-C or ``--seconds``. Exit 0 when it identified
itself (or has no way to), 1 when it did not answer."""

from __future__ import annotations

import asyncio
import time
from typing import TextIO

from tablectl.controller.tools.diag.devices.plugins import Decoded, Identity
from tablectl.controller.tools.diag.errors import UnsupportedError
from tablectl.controller.tools.diag.link import Link
from tablectl.controller.tools.diag.render import emit_json
from tablectl.controller.tools.diag.session import Deadline, clock_text
from tablectl.controller.tools.diag.target import Target

_TICK = 0.25
"""How often the decoder's timers run (silence detection) when nothing arrives."""


def render_identity(identity: Identity, out: TextIO, *, applicable: bool = True) -> None:
    width = max((len(k) for k in identity.facts), default=0)
    for key, value in identity.facts.items():
        out.write(f"{key.rjust(width)}: {value}\n")
    for warning in identity.warnings:
        out.write(f"WARNING: {warning}\n")
    if not applicable:
        out.write("listening only\n")
    else:
        out.write(("identified" if identity.identified else "NOT identified") + "\n")
    out.flush()


def _line(item: Decoded, at: float, out: TextIO, as_json: bool) -> None:
    if as_json:
        emit_json(out, {"t": round(at, 3), "kind": item.kind, "text": item.text, **item.data})
    else:
        out.write(f"{clock_text(at)}  {item.kind:<7}  {item.text}\n")
        out.flush()


async def run_probe(
    target: Target,
    *,
    seconds: float | None,
    stop: asyncio.Event,
    out: TextIO,
    as_json: bool = False,
) -> int:
    """Identify, then stream decoded traffic. Raises the link's errors (port held, …)."""
    diag = target.diagnostics
    decoder = diag.decoder()
    async with Link(diag.open_stream(), diag.port) as link:
        required = True
        try:
            identity = await diag.identify(link)
        except UnsupportedError as exc:
            # Nothing to ask (a barcode shoe only talks when a card passes): listen only.
            required = False
            identity = Identity(False, {"device": diag.family, "identify": str(exc)})
        if as_json:
            emit_json(
                out,
                {
                    "type": "identity",
                    "device": target.device.id,
                    "identified": identity.identified,
                    "facts": dict(identity.facts),
                    "warnings": list(identity.warnings),
                },
            )
        else:
            render_identity(identity, out, applicable=required)
            out.write("live (Ctrl-C to stop):\n")
        deadline = Deadline(seconds, stop)
        while not deadline.done:
            data = await link.read(deadline.left(_TICK))
            now = time.time()
            items = decoder.feed(data, now) if data else []
            for item in items + decoder.tick(now):
                _line(item, now, out, as_json)
    return 0 if identity.identified or not required else 1

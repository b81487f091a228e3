"""The station's web app (Starlette): the page, its live model, the actions.

Routes: ``GET /`` (the page: one HTML file, one script, one stylesheet, no build step and no
CDN, so it works with the floor's network down), ``GET /stream`` (server-sent ``screen`` events:
the model of :mod:`.screen` whenever it changes, a comment every 15 s), ``GET /screen.json``,
``GET /status.json`` and ``GET /metrics`` (the PIN failures and lockouts), and the ``POST
/api/…`` actions, which answer ``{"ok", "message", "detail", "code"}``. The dashboard's
:class:`~tablectl.controller.tools.dashboard.app.Guard` adds the strict CSP and checks ``Host``
(DNS rebinding); a POST must be JSON from this origin, so no other page can press a button.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, Final, cast

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import (
    FileResponse,
    JSONResponse,
    PlainTextResponse,
    Response,
    StreamingResponse,
)
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tablectl.controller.station.actions import Said
from tablectl.controller.station.desk import Credentials, Desk
from tablectl.controller.station.live import Watch, follow
from tablectl.controller.station.prompts import Table
from tablectl.controller.station.screen import model
from tablectl.controller.tools.dashboard.app import ASGIApp, Guard, following
from tablectl.controller.tools.dashboard.subscriber import Broker

STATIC: Final = Path(__file__).resolve().parent / "static"
KEEPALIVE: Final = 15.0
MAX_BODY: Final = 4096
"""Largest action body read (a badge, a PIN, a card: a few hundred bytes)."""


async def _body(request: Request) -> dict[str, Any] | Response:
    """The JSON object of a POST from this origin, or the refusal."""
    origin = request.headers.get("origin")
    if origin is not None and origin.split("://", 1)[-1] != request.headers.get("host"):
        return PlainTextResponse("cross-origin request refused\n", status_code=403)
    if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
        return PlainTextResponse("send JSON\n", status_code=415)
    raw = b""
    async for chunk in request.stream():
        raw += chunk
        if len(raw) > MAX_BODY:
            return PlainTextResponse("too large\n", status_code=413)
    try:
        body = json.loads(raw)
    except ValueError:
        body = None
    if not isinstance(body, dict):
        return PlainTextResponse("a JSON object is required\n", status_code=400)
    return body


def _said(said: Said) -> Response:
    shown = {k: v for k, v in asdict(said).items() if k != "reply"}
    if said.reply is not None and isinstance(said.reply.get("state"), dict):
        shown["state"] = said.reply["state"]  # cmd/status: the technician's self-test view
    return JSONResponse(shown)


def _action_routes(watch: Watch, desk: Desk) -> list[Route]:
    """The ``POST /api/…`` routes: each reads a JSON body, asks the desk, redraws, answers."""

    def acting(
        handler: Callable[[dict[str, Any]], Awaitable[Said]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            body = await _body(request)
            if isinstance(body, Response):
                return body
            said = await handler(body)
            watch.touch()
            return _said(said)

        return endpoint

    async def sign_on(body: dict[str, Any]) -> Said:
        creds = Credentials.of(body, "dealer")
        assert creds is not None
        return await desk.sign_on(creds, Credentials.of(body.get("supervisor"), "supervisor"))

    async def sign_off(body: dict[str, Any]) -> Said:
        reason = body.get("reason")
        reason = reason if isinstance(reason, str) and reason.isidentifier() else "break"
        return await desk.sign_off(Credentials.of(body.get("signer"), "dealer"), reason[:32])

    async def act(body: dict[str, Any]) -> Said:
        fields = body.get("fields")
        signer = body.get("signer")
        role = signer.get("role") if isinstance(signer, dict) else None
        creds = Credentials.of(signer, role if isinstance(role, str) else "supervisor")
        return await desk.act(
            str(body.get("action")), fields if isinstance(fields, dict) else {}, creds
        )

    async def call(body: dict[str, Any]) -> Said:
        return desk.call_supervisor(cancel=body.get("cancel") is True)

    return [
        Route("/api/sign-on", acting(sign_on), methods=["POST"]),
        Route("/api/sign-off", acting(sign_off), methods=["POST"]),
        Route("/api/act", acting(act), methods=["POST"]),
        Route("/api/call", acting(call), methods=["POST"]),
    ]


def create_app(
    watch: Watch,
    desk: Desk,
    table: Table,
    *,
    station: str,
    broker: Broker | None = None,
    hosts: frozenset[str] | None = None,
) -> ASGIApp:
    """The station as an ASGI app; with ``broker`` it follows the table while it runs."""

    def screen() -> dict[str, Any]:
        return model(watch.view, table, desk, station=station)

    async def changes() -> AsyncIterator[str]:
        sent = ""
        yield "retry: 1000\n\n"
        while not watch.closed:
            version = watch.view.version
            now = json.dumps(screen(), ensure_ascii=False)
            if now != sent:
                sent = now
                yield f"event: screen\ndata: {now}\n\n"
            try:
                async with asyncio.timeout(KEEPALIVE):
                    await watch.wait(version)
            except TimeoutError:
                yield ": keep-alive\n\n"

    async def page(request: Request) -> Response:
        return FileResponse(STATIC / "station.html", media_type="text/html")

    async def stream(request: Request) -> Response:
        return StreamingResponse(
            changes(), media_type="text/event-stream", headers={"x-accel-buffering": "no"}
        )

    async def screen_json(request: Request) -> Response:
        return JSONResponse(screen())

    def counters() -> dict[str, int]:
        lockouts = desk.gate.lockouts
        return {
            "pin_failures_total": lockouts.failures_total,
            "lockouts_total": lockouts.lockouts_total,
            "commands_total": desk.actions,
            "commands_refused_total": desk.refused,
            "messages_total": watch.view.messages,
            "messages_dropped_total": sum(watch.view.dropped.values()),
        }

    async def status(request: Request) -> Response:
        return JSONResponse(
            {"station": station, "table": watch.view.table, "link": watch.view.link, **counters()}
        )

    async def metrics(request: Request) -> Response:
        lines = []
        for name, value in counters().items():
            metric = f"tablectl_station_{name}"
            lines += [f"# TYPE {metric} counter", f'{metric}{{station="{station}"}} {value}']
        return PlainTextResponse("\n".join(lines) + "\n", media_type="text/plain; version=0.0.4")

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204)

    lifespan = following(
        "station:mqtt", (lambda: follow(watch, broker)) if broker else None, close=watch.close
    )
    app = Starlette(
        routes=[
            Route("/", page),
            Route("/stream", stream),
            Route("/screen.json", screen_json),
            Route("/status.json", status),
            Route("/metrics", metrics),
            *_action_routes(watch, desk),
            Route("/favicon.ico", no_icon),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        lifespan=lifespan,
    )
    return Guard(cast(ASGIApp, app), hosts=hosts, login=None)

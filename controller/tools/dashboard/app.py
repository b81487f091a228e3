"""The dashboard's web app (Starlette): the pages, the statistics' SVG, the live stream.

Routes (all ``GET``; nothing here changes anything):

* ``/`` the floor: a tile per table; ``/table/{id}`` its results history and alarms;
  ``/billboard/{id}`` the roulette billboard; ``/stats/{id}`` the statistics;
* ``/svg/{id}/wheel.svg``, ``/svg/{id}/shuffle.svg`` the plots (404 while there is nothing to
  draw);
* ``/stream?view=…&table=…`` server-sent events: the page's fragments (:mod:`.pages`) whenever
  they change, as ``event: fragment`` with ``{"id", "html", "parent"}``; a comment every 15 s
  keeps proxies from closing it;
* ``/static/…`` the page's one script and one stylesheet, served from the package (no build
  step, nothing from elsewhere).

Every response carries a strict Content-Security-Policy (same origin only, no inline script or
style) and no caching. :class:`Guard` checks the ``Host`` header on a loopback listener (so a
web page elsewhere cannot reach it through DNS rebinding) and HTTP Basic when there is a users
file (:mod:`.auth`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any, Final, cast

from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tablectl.controller.tools.dashboard.auth import BasicLogin
from tablectl.controller.tools.dashboard.charts import as_variant, shuffle_figures, wheel_figures
from tablectl.controller.tools.dashboard.floor import Floor
from tablectl.controller.tools.dashboard.pages import (
    Fragment,
    View,
    banner,
    fragments,
    not_found_page,
    page,
    tile,
)
from tablectl.controller.tools.dashboard.subscriber import Broker, FloorFeed, follow

__all__ = ["Guard", "create_app"]

STATIC: Final = Path(__file__).resolve().parent / "static"
KEEPALIVE: Final = 15.0
_VIEWS: Final[tuple[View, ...]] = ("floor", "table", "billboard", "stats")
_HEADERS: Final = {
    "content-security-policy": (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        "connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
    ),
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


def _hostname(host: str) -> str:
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


class Guard:
    """ASGI middleware: the ``Host`` check, the login, and the security headers.

    Args:
        hosts: the host names a request may name (``None``: any; a non-loopback listener, which
            has a login instead).
        login: HTTP Basic users (``None``: no login).
    """

    def __init__(
        self, app: ASGIApp, *, hosts: frozenset[str] | None, login: BasicLogin | None
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.login = login

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = Headers(scope=scope)
        refusal: Response | None = None
        if self.hosts is not None and _hostname(headers.get("host", "")) not in self.hosts:
            refusal = PlainTextResponse("unknown host\n", status_code=421)
        elif self.login is not None:
            header = headers.get("authorization")
            if not self.login.known(header):
                if await asyncio.to_thread(self.login.verify, header):
                    self.login.remember(cast(str, header))
                else:
                    realm = f'Basic realm="{BasicLogin.REALM}", charset="UTF-8"'
                    refusal = PlainTextResponse(
                        "login required\n", status_code=401, headers={"www-authenticate": realm}
                    )

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = MutableHeaders(scope=message)
                for name, value in _HEADERS.items():
                    extra.setdefault(name, value)
            await send(message)

        if refusal is not None:
            await refusal(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)


def _sse(fragment: Fragment) -> str:
    data = json.dumps({"id": fragment.id, "html": fragment.html, "parent": fragment.parent})
    return f"event: fragment\ndata: {data}\n\n"


async def _changes(
    feed: FloorFeed, view: View, table: str | None, *, throttle: float
) -> AsyncIterator[str]:
    """The stream of one page: every fragment once, then each one again when it changed.
    Fragments are only rebuilt for the tables that changed (a floor of a hundred tables sends
    one tile, not a hundred), and bursts are coalesced over ``throttle`` seconds."""
    floor = feed.floor
    sent: dict[str, str] = {}
    drawn: dict[str | None, object] = {}
    yield "retry: 2000\n\n"
    while not feed.closed:
        version = floor.version
        link_changed = drawn.get(None) != floor.link
        if link_changed:
            drawn[None] = floor.link
        if view == "floor" or table is None:
            due = [banner(floor)] if link_changed else []
            for name in floor.tables():
                if link_changed or drawn.get(name) != floor.table_version(name):
                    drawn[name] = floor.table_version(name)
                    due.append(tile(floor, name))
        elif link_changed or drawn.get(table) != floor.table_version(table):
            drawn[table] = floor.table_version(table)
            due = fragments(floor, view, table)
        else:
            due = []
        for fragment in due:
            if sent.get(fragment.id) != fragment.html:
                sent[fragment.id] = fragment.html
                yield _sse(fragment)
        try:
            async with asyncio.timeout(KEEPALIVE):
                await feed.wait(version)
        except TimeoutError:
            yield ": keep-alive\n\n"
            continue
        await asyncio.sleep(throttle)


def create_app(
    feed: FloorFeed,
    *,
    broker: Broker | None = None,
    hosts: frozenset[str] | None = None,
    login: BasicLogin | None = None,
    throttle: float = 0.25,
) -> Guard:
    """The dashboard as an ASGI app; with ``broker`` it follows the floor while it runs."""
    floor: Floor = feed.floor

    def _table(request: Request) -> str:
        return str(request.path_params["table"])

    async def floor_page(request: Request) -> Response:
        return HTMLResponse(page(floor, "floor"))

    async def table_page(request: Request) -> Response:
        return HTMLResponse(page(floor, "table", _table(request)))

    async def billboard_page(request: Request) -> Response:
        return HTMLResponse(page(floor, "billboard", _table(request)))

    async def stats_page(request: Request) -> Response:
        return HTMLResponse(page(floor, "stats", _table(request)))

    async def svg(request: Request) -> Response:
        name, kind = _table(request), request.path_params["kind"]
        figures = None
        if kind == "wheel" and floor.family(name) == "roulette":
            spins = floor.spins(name)
            figures = wheel_figures(name, spins, as_variant(floor.variant(name)))
        elif kind == "shuffle" and floor.family(name) == "cards":
            figures = shuffle_figures(name, floor.shoe_records(name))
        if figures is None or figures.svg is None:
            what = "; ".join(figures.lines) if figures is not None else "no such plot"
            return PlainTextResponse(f"{what}\n", status_code=404)
        return Response(figures.svg, media_type="image/svg+xml")

    async def stream(request: Request) -> Response:
        view = request.query_params.get("view", "floor")
        if view not in _VIEWS:
            return PlainTextResponse("unknown view\n", status_code=400)
        return StreamingResponse(
            _changes(feed, view, request.query_params.get("table"), throttle=throttle),
            media_type="text/event-stream",
            headers={"x-accel-buffering": "no"},
        )

    async def no_icon(request: Request) -> Response:
        return Response(status_code=204)

    async def not_found(request: Request, exc: Exception) -> Response:
        return HTMLResponse(not_found_page(floor, request.url.path), status_code=404)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(follow(feed, broker), name="dashboard:mqtt") if broker else None
        try:
            yield
        finally:
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    app = Starlette(
        routes=[
            Route("/", floor_page),
            Route("/table/{table}", table_page),
            Route("/billboard/{table}", billboard_page),
            Route("/stats/{table}", stats_page),
            Route("/svg/{table}/{kind:str}.svg", svg),
            Route("/stream", stream),
            Route("/favicon.ico", no_icon),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={404: not_found},
        lifespan=lifespan,
    )
    return Guard(cast(ASGIApp, app), hosts=hosts, login=login)

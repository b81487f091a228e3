"""The dashboard's web app (Starlette): the pages, the statistics' SVG, the live stream.

Every response has a strict same-origin CSP and no caching (HSTS over TLS); :class:`Guard` checks
``Host`` on loopback (DNS rebinding) and the login (docs/dashboard.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine, MutableMapping
from pathlib import Path
from typing import Any, Final, cast

import structlog
from starlette.applications import Starlette
from starlette.datastructures import Headers, MutableHeaders
from starlette.requests import Request
from starlette.responses import HTMLResponse, PlainTextResponse, Response, StreamingResponse
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from tablectl.controller.tools.dashboard.auth import BasicLogin, BusyError, Throttle
from tablectl.controller.tools.dashboard.charts import as_variant, shuffle_figures, wheel_figures
from tablectl.controller.tools.dashboard.floor import Floor
from tablectl.controller.tools.dashboard.pages import (
    Fragment,
    View,
    banner,
    fragments,
    not_found_page,
    page,
    staff_page,
    tile,
)
from tablectl.controller.tools.dashboard.staff import StaffSource
from tablectl.controller.tools.dashboard.subscriber import Broker, FloorFeed, keep_following
from tablectl.controller.tools.summary import printable

log = structlog.get_logger("tablectl.dashboard")

STATIC: Final = Path(__file__).resolve().parent / "static"
KEEPALIVE: Final = 15.0
HSTS: Final = "max-age=31536000"
"""``Strict-Transport-Security`` over TLS: a year (no ``includeSubDomains``: the dashboard's
host name may be shared with other services)."""
_BUSY_LOG_EVERY: Final = 10.0
_VIEWS: Final[tuple[View, ...]] = ("floor", "table", "billboard", "stats", "staff")
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


def following(
    name: str,
    follow: Callable[[], Coroutine[Any, Any, None]] | None,
    close: Callable[[], None] | None = None,
) -> Callable[[Starlette], contextlib.AbstractAsyncContextManager[None]]:
    """A Starlette lifespan for a page fed by the broker (the dashboard, the station): ``follow``
    runs in a task named ``name`` while the app serves (``None``: no broker); at the end
    ``close`` (what wakes the open streams) and then the task is cancelled and awaited."""

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        task = asyncio.create_task(follow(), name=name) if follow is not None else None
        try:
            yield
        finally:
            if close is not None:
                close()
            if task is not None:
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    return lifespan


class Guard:
    """ASGI middleware: the ``Host`` check (``hosts`` ``None``: a non-loopback listener, which has a
    login instead), the login, and the security headers."""

    def __init__(
        self,
        app: ASGIApp,
        *,
        hosts: frozenset[str] | None,
        login: BasicLogin | None,
        throttle: Throttle | None = None,
        on_failure: Callable[[], None] | None = None,
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.login = login
        self.throttle = throttle or Throttle()
        self.on_failure = on_failure
        self._busy_logged: dict[str, float] = {}

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
                refusal = await self._log_in(self.login, scope, header)
        tls = scope.get("scheme") == "https"

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                extra = MutableHeaders(scope=message)
                for name, value in _HEADERS.items():
                    extra.setdefault(name, value)
                if tls:
                    extra.setdefault("strict-transport-security", HSTS)
            await send(message)

        if refusal is not None:
            await refusal(scope, receive, send_with_headers)
            return
        await self.app(scope, receive, send_with_headers)

    async def _log_in(self, login: BasicLogin, scope: Scope, header: str | None) -> Response | None:
        """Check a login not seen before, throttled; ``None`` when it is good, else the
        refusal (401, or 429 while too many attempts of its source or name wait)."""
        realm = f'Basic realm="{BasicLogin.REALM}", charset="UTF-8"'
        challenge = PlainTextResponse(
            "login required\n", status_code=401, headers={"www-authenticate": realm}
        )
        if not header:
            return challenge  # a browser's first request: asking is no failure
        client = scope.get("client")
        source = str(client[0]) if client else "unknown"
        user = login.user_of(header)
        keys = [f"source {source}", *([f"user {user}"] if user is not None else [])]
        try:
            async with self.throttle.turn(keys):
                if login.known(header):  # an attempt it waited behind had the same login
                    return None
                if await asyncio.to_thread(login.verify, header):
                    login.remember(header)
                    self.throttle.succeeded(keys)
                    return None
                wait = self.throttle.failed(keys)
        except BusyError as exc:
            self._failed(source, user, busy=True)
            return PlainTextResponse(
                "too many login attempts: try again later\n",
                status_code=429,
                headers={"retry-after": str(round(exc.retry_after))},
            )
        self._failed(source, user, wait=wait)
        return challenge

    def _failed(
        self, source: str, user: str | None, *, wait: float = 0.0, busy: bool = False
    ) -> None:
        """Count a failed login and log it (attempts refused as too many at once: one line per
        source every few seconds)."""
        if self.on_failure is not None:
            self.on_failure()
        shown = printable(user, 64) if user is not None else None
        if not busy:
            log.warning(
                "dashboard_login_failed",
                user=shown,
                source=source,
                failures=self.throttle.failures(f"source {source}"),
                next_attempt_delay_s=round(wait, 2),
            )
            return
        now = time.monotonic()
        if now - self._busy_logged.get(source, -_BUSY_LOG_EVERY) >= _BUSY_LOG_EVERY:
            if len(self._busy_logged) > 4096:
                self._busy_logged.clear()
            self._busy_logged[source] = now
            log.warning("dashboard_login_refused_busy", user=shown, source=source)


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
        if view == "staff":
            due = [banner(floor)] if link_changed else []
        elif view == "floor" or table is None:
            due = [banner(floor)] if link_changed else []
            names = floor.tables()
            present = set(names)
            for name in [n for n in drawn if n is not None and n not in present]:
                del drawn[name]
                due.append(tile(floor, name))  # gone: the fragment that removes its tile
            for name in names:
                if link_changed or drawn.get(name) != floor.table_version(name):
                    drawn[name] = floor.table_version(name)
                    due.append(tile(floor, name))
        elif link_changed or drawn.get(table) != floor.table_version(table):
            drawn[table] = floor.table_version(table)
            due = fragments(floor, view, table)
        else:
            due = []
        for fragment in due:
            if not fragment.html and fragment.id in sent:
                del sent[fragment.id]
                yield _sse(fragment)
            elif fragment.html and sent.get(fragment.id) != fragment.html:
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
    login_throttle: Throttle | None = None,
    staff: StaffSource | None = None,
) -> Guard:
    """The dashboard as an ASGI app; with ``broker`` it follows the floor while it runs (and
    starts the feed again should it die); with ``staff`` its staff page reads that archive."""
    floor: Floor = feed.floor
    archive = staff or StaffSource(None)

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

    async def staff_view(request: Request) -> Response:
        return HTMLResponse(staff_page(floor, await archive.figures()))

    async def staff_svg(request: Request) -> Response:
        figures = await archive.figures()
        if figures is None or figures.svg is None:
            return PlainTextResponse("no figures by dealer\n", status_code=404)
        return Response(figures.svg, media_type="image/svg+xml")

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

    lifespan = following(
        "dashboard:mqtt", (lambda: keep_following(feed, broker)) if broker else None
    )
    app = Starlette(
        routes=[
            Route("/", floor_page),
            Route("/table/{table}", table_page),
            Route("/billboard/{table}", billboard_page),
            Route("/stats/{table}", stats_page),
            Route("/staff", staff_view),
            Route("/staff.svg", staff_svg),
            Route("/svg/{table}/{kind:str}.svg", svg),
            Route("/stream", stream),
            Route("/favicon.ico", no_icon),
            Mount("/static", StaticFiles(directory=STATIC), name="static"),
        ],
        exception_handlers={404: not_found},
        lifespan=lifespan,
    )

    def count_failure() -> None:
        feed.login_failures += 1

    return Guard(
        cast(ASGIApp, app),
        hosts=hosts,
        login=login,
        throttle=login_throttle,
        on_failure=count_failure,
    )

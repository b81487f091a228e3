"""``tablectl dashboard``: a read-only web view of a floor of tables, for the pit and the wheel.

One process subscribes to every table under a topic prefix on one broker (or broker cluster) and
serves pages: a tile per table, each table's results history, a roulette billboard and the
statistics' plots, updated live by server-sent events. It publishes nothing and sends no
command, so it shows only what the tables already publish (a face-down card stays withheld).

Modules: :mod:`.floor` (pure state: messages in, typed tiles and history out), :mod:`.billboard`
(the roulette billboard's figures), :mod:`.charts` (the statistics' SVG, drawn by
``diag stats``' own code), :mod:`.pages` (HTML), :mod:`.subscriber` (MQTT → floor),
:mod:`.app` (the ASGI app: routes, live updates), :mod:`.auth` (login and TLS rules),
:mod:`.command` (the CLI), :mod:`.screenshots` (the README's pictures, from live lab tables).
"""

__all__: list[str] = []

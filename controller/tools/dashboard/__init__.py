"""``tablectl dashboard``: a read-only web view of a floor of tables (docs/dashboard.md).

It publishes nothing and sends no command, so it shows only what the tables already publish (a
face-down card stays withheld).
"""

__all__: list[str] = []

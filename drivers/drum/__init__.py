"""Lotto/keno ball drum on CAN: the tablectl reference protocol (``docs/protocols/drum.md``).

:mod:`tablectl.drivers.drum.protocol` (frames ↔ messages) and
:mod:`tablectl.drivers.drum.interpreter` (messages + time → events) are pure;
:mod:`tablectl.drivers.drum.driver` binds them to a python-can bus. Nothing is re-exported here so
that importing the package never loads pydantic, asyncio or python-can.
"""

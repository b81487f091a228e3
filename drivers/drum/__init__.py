"""Lotto/keno ball drum on CAN: the tablectl reference protocol (``docs/protocols/drum.md``).

``protocol`` and ``interpreter`` are pure, ``driver`` binds them to python-can. Nothing is
re-exported, so importing the package loads neither pydantic, asyncio nor python-can.
"""

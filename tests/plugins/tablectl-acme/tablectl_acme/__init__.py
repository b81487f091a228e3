"""The ACME card shoe for tablectl: codec (:mod:`.protocol`), driver (:mod:`.driver`), simulator."""

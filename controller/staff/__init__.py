"""The people at the table: the operator's staff roster, their credentials, PIN lockouts.

docs/station.md says how a dealer signs on and what the journal records about it.
"""

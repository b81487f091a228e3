"""``diag stats``: wheel bias and shuffle randomness, from the journal (and the wheel); the maths is
pure."""

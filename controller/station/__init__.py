"""``tablectl station``: the dealer's touch screen at the table (docs/station.md, issue 28 §2).

A web page served by the dealer PC: what the table expects next in dealer words
(:mod:`.prompts`), the table as its retained topics tell it (:mod:`.live`), and the dealer's,
supervisor's and technician's actions, each a command signed with the role key of the person who
authenticated for it (:mod:`.actions`). It never writes the journal: the table decides.
"""

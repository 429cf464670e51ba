"""Pure pairing for tables of four. No I/O, no clock: the same inputs give the same pairings.

Modules: `swiss` (one Swiss round from standings and history), `round_robin` (a whole
round-robin: finite-field designs where they exist, else a seeded search), `seats` (seat
balance and neighbours), `byes` (byes and house-bot seats), `duplicate` (deal seeds per table,
optionally shared), `export` (king-pairing/1 documents: reproduce and verify a round),
`designs` and `gf` (block designs and the finite fields they are built from), `history`
(meetings, seats, neighbours and byes from earlier rounds). See docs/TOURNAMENTS.md.
"""

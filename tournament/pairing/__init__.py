"""Pure pairing for tables of four: round-robin designs and search, Swiss, seats, byes,
duplicate deals and reproducible exports. No I/O, no clock: same inputs, same pairings."""

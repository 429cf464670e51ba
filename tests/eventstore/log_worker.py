"""A process of the transparency-log concurrency test: appends to its own streams and, after
every few appends, extends the tree and prints the (size, root) it saw, one JSON a line."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

import orjson  # noqa: E402

from eventstore import ANY, EventStore, NewEvent, StoreSettings  # noqa: E402
from eventstore.logtree import LogTree  # noqa: E402


def main() -> None:
    url, schema, name, count = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    store = EventStore.open(url, settings=StoreSettings(pg_schema=schema, pool_size=2))
    tree = LogTree(store, batch=7)
    for i in range(count):
        store.append(f"w-{name}-{i % 3}", [NewEvent("Tick", {"i": i, "w": name})], ANY)
        if i % 4 == 0:
            size = tree.integrate()
            at, root = tree.root(size)
            print(orjson.dumps({"size": at, "root": root.hex()}).decode(), flush=True)
    store.close()


if __name__ == "__main__":
    main()

"""RFC 9162 Merkle trees: hashing, roots, inclusion and consistency proofs and their checks.

Pure functions, no I/O. A tree over leaves ``D[0:n]`` is described by the hashes of its
*ranges* ``D[start:end]``: every range the RFC's recursion visits is cut into perfect,
aligned subtrees (`range_nodes`), so a store that keeps the perfect subtrees' hashes
(``(level, index)`` = the 2**level leaves from index * 2**level) can answer any root or proof
at any past size with O(log n) of them. Proofs are built against a callable giving a range's
hash; `proof_ranges` lists the ranges a proof needs first, so a store fetches them at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import Final

HASH_SIZE: Final = 32
EMPTY_ROOT: Final = hashlib.sha256(b"").digest()
"""The root of the empty tree: SHA-256 of nothing (RFC 9162 2.1.1)."""

Range = tuple[int, int]
"""Leaves ``[start, end)``."""

Node = tuple[int, int]
"""A perfect subtree (level, index): leaves ``[index * 2**level, (index + 1) * 2**level)``."""

RangeHash = Callable[[int, int], bytes]


class ProofError(ValueError):
    """A proof was asked for a tree or leaf that does not exist (index or size out of range)."""


def leaf_hash(data: bytes) -> bytes:
    """MTH of one entry: SHA-256(0x00 || data)."""
    return hashlib.sha256(b"\x00" + data).digest()


def node_hash(left: bytes, right: bytes) -> bytes:
    """An interior node: SHA-256(0x01 || left || right)."""
    return hashlib.sha256(b"\x01" + left + right).digest()


def _split(n: int) -> int:
    """The largest power of two smaller than n (n >= 2)."""
    return 1 << ((n - 1).bit_length() - 1)


def range_nodes(start: int, end: int) -> list[Node]:
    """The perfect subtrees that make up ``D[start:end]``, left to right, for every range the
    RFC's recursion visits (its start is aligned to the power of two above its length)."""
    out: list[Node] = []
    while start < end:
        level = (end - start).bit_length() - 1
        out.append((level, start >> level))
        start += 1 << level
    return out


def fold(hashes: Sequence[bytes]) -> bytes:
    """A range's hash from its `range_nodes` hashes: H(c1, H(c2, ... H(ck-1, ck)))."""
    if not hashes:
        return EMPTY_ROOT
    out = hashes[-1]
    for h in reversed(hashes[:-1]):
        out = node_hash(h, out)
    return out


def root_of(leaves: Sequence[bytes]) -> bytes:
    """MTH(D[n]) by the RFC's recursive definition, over leaf hashes (for checks and tests)."""
    n = len(leaves)
    if n == 0:
        return EMPTY_ROOT
    if n == 1:
        return leaves[0]
    k = _split(n)
    return node_hash(root_of(leaves[:k]), root_of(leaves[k:]))


def _check(index: int, size: int, what: str) -> None:
    if type(index) is not int or type(size) is not int or index < 0 or index >= size:
        raise ProofError(f"{what} {index} is not inside a tree of size {size}")


def inclusion_ranges(index: int, size: int) -> list[Range]:
    """The ranges whose hashes form PATH(index, D[size]), in proof order (leaf upwards)."""
    _check(index, size, "leaf index")
    out: list[Range] = []
    start, end = 0, size
    while end - start > 1:
        k = _split(end - start)
        if index - start < k:
            out.append((start + k, end))
            end = start + k
        else:
            out.append((start, start + k))
            start += k
    out.reverse()
    return out


def consistency_ranges(first: int, second: int) -> list[Range]:
    """The ranges whose hashes form PROOF(first, D[second]) (empty when first is 0 or equal)."""
    if type(first) is not int or type(second) is not int or not 0 <= first <= second:
        raise ProofError(f"no consistency proof from size {first} to size {second}")
    if first in (0, second):
        return []
    out: list[Range] = []
    start, end, m, whole = 0, second, first, True
    while True:
        n = end - start
        if m == n:
            if not whole:
                out.append((start, end))
            break
        k = _split(n)
        if m <= k:
            out.append((start + k, end))
            end = start + k
        else:
            out.append((start, start + k))
            start += k
            m -= k
            whole = False
    out.reverse()
    return out


def proof_nodes(ranges: Sequence[Range]) -> set[Node]:
    """Every perfect subtree the ranges need: what a store fetches for a proof or a root."""
    return {node for r in ranges for node in range_nodes(*r)}


def range_hash_from(nodes: dict[Node, bytes]) -> RangeHash:
    """A `RangeHash` over fetched perfect subtrees (KeyError if one is missing)."""

    def of(start: int, end: int) -> bytes:
        return fold([nodes[n] for n in range_nodes(start, end)])

    return of


def verify_inclusion(
    index: int, size: int, leaf: bytes, proof: Sequence[bytes], root: bytes
) -> bool:
    """RFC 9162 2.1.3.2: does `proof` show leaf hash `leaf` at `index` of the tree `root`?"""
    if not 0 <= index < size:
        return False
    fn, sn, r = index, size - 1, leaf
    for p in proof:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            r = node_hash(p, r)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            r = node_hash(r, p)
        fn >>= 1
        sn >>= 1
    return sn == 0 and r == root


def verify_consistency(
    first: int, second: int, first_root: bytes, second_root: bytes, proof: Sequence[bytes]
) -> bool:
    """RFC 9162 2.1.4.2: does `proof` show the tree of size `second` extends that of `first`?"""
    if not 0 <= first <= second:
        return False
    if first == second:
        return not proof and first_root == second_root
    if first == 0:
        return not proof and first_root == EMPTY_ROOT
    if not proof:
        return False
    path = list(proof)
    if first & (first - 1) == 0:
        path.insert(0, first_root)
    fn, sn = first - 1, second - 1
    while fn & 1:
        fn >>= 1
        sn >>= 1
    fr = sr = path[0]
    for c in path[1:]:
        if sn == 0:
            return False
        if fn & 1 or fn == sn:
            fr = node_hash(c, fr)
            sr = node_hash(c, sr)
            if not fn & 1:
                while fn and not fn & 1:
                    fn >>= 1
                    sn >>= 1
        else:
            sr = node_hash(sr, c)
        fn >>= 1
        sn >>= 1
    return fr == first_root and sr == second_root and sn == 0


class CompactTree:
    """A growing tree kept as its right edge (one hash per set bit of its size): appending is
    amortised O(1), the root O(log n); the new perfect subtrees each append completes are
    returned so a store can write them."""

    __slots__ = ("_edge", "size")

    def __init__(self, size: int = 0, edge: Sequence[bytes] = ()) -> None:
        """Resume at `size` from its `range_nodes(0, size)` hashes (`edge`), left to right."""
        if len(edge) != size.bit_count():
            raise ProofError(f"a tree of size {size} has {size.bit_count()} edge hashes")
        self.size = size
        self._edge = list(edge)

    def append(self, leaf: bytes) -> list[tuple[Node, bytes]]:
        """Add a leaf hash; the perfect subtrees (the leaf's own first) it completes."""
        index = self.size
        made: list[tuple[Node, bytes]] = [((0, index), leaf)]
        h, level = leaf, 0
        edge = self._edge
        while index & 1:
            h = node_hash(edge.pop(), h)
            index >>= 1
            level += 1
            made.append(((level, index), h))
        edge.append(h)
        self.size += 1
        return made

    def root(self) -> bytes:
        return fold(self._edge)

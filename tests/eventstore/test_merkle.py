"""RFC 9162 hashing, roots and proofs (eventstore.merkle): properties, and a cross-check
against an independent implementation (pymerkle, RFC 6962 hashing)."""

from __future__ import annotations

import hashlib

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pymerkle import InmemoryTree

from eventstore import merkle as m

sizes = st.integers(min_value=1, max_value=80)


def leaves_of(n: int, salt: int = 0) -> list[bytes]:
    return [m.leaf_hash(b"entry %d/%d" % (salt, i)) for i in range(n)]


def ranges_hash(leaves: list[bytes]) -> m.RangeHash:
    return lambda start, end: m.root_of(leaves[start:end])


def test_hashing_follows_rfc_9162() -> None:
    a, b = b"a" * 32, b"b" * 32
    assert hashlib.sha256(b"").digest() == m.EMPTY_ROOT
    assert m.leaf_hash(b"x") == hashlib.sha256(b"\x00x").digest()
    assert m.node_hash(a, b) == hashlib.sha256(b"\x01" + a + b).digest()


def test_roots_and_proofs_agree_with_pymerkle() -> None:
    entries = [b"event %d" % i for i in range(70)]
    theirs = InmemoryTree(algorithm="sha256")
    for e in entries:
        theirs.append_entry(e)
    ours = [m.leaf_hash(e) for e in entries]
    for n in range(1, len(entries) + 1):
        assert m.root_of(ours[:n]) == theirs.get_root(n), n
        assert ours[n - 1] == theirs.get_leaf(n)
        compact = m.CompactTree()
        for leaf in ours[:n]:
            compact.append(leaf)
        assert compact.root() == theirs.get_root(n)
    of = ranges_hash(ours)
    for n in (1, 2, 3, 7, 8, 13, 64, 70):
        for i in range(n):
            path = [of(*r) for r in m.inclusion_ranges(i, n)]
            # pymerkle's path starts with the leaf itself, then the same siblings
            assert theirs.prove_inclusion(i + 1, n).serialize()["path"][1:] == [
                p.hex() for p in path
            ]
        for k in range(1, n + 1):
            path = [of(*r) for r in m.consistency_ranges(k, n)]
            assert m.verify_consistency(k, n, theirs.get_root(k), theirs.get_root(n), path)


@settings(max_examples=150, deadline=None)
@given(n=sizes, data=st.data())
def test_every_inclusion_proof_verifies_and_any_change_fails(n: int, data: st.DataObject) -> None:
    leaves = leaves_of(n)
    root = m.root_of(leaves)
    i = data.draw(st.integers(0, n - 1))
    proof = [ranges_hash(leaves)(*r) for r in m.inclusion_ranges(i, n)]
    assert m.verify_inclusion(i, n, leaves[i], proof, root)
    assert not m.verify_inclusion(i, n, m.leaf_hash(b"other"), proof, root)
    if n > 1:
        assert not m.verify_inclusion((i + 1) % n, n, leaves[i], proof, root)
    if proof:
        j = data.draw(st.integers(0, len(proof) - 1))
        bad = list(proof)
        bad[j] = bytes(32)
        assert not m.verify_inclusion(i, n, leaves[i], bad, root)
        assert not m.verify_inclusion(i, n, leaves[i], proof[:-1], root)
    assert not m.verify_inclusion(i, n, leaves[i], [*proof, bytes(32)], root)


@settings(max_examples=150, deadline=None)
@given(n=sizes, data=st.data())
def test_every_consistency_proof_verifies_and_any_change_fails(n: int, data: st.DataObject) -> None:
    leaves = leaves_of(n)
    k = data.draw(st.integers(0, n))
    proof = [ranges_hash(leaves)(*r) for r in m.consistency_ranges(k, n)]
    old, new = m.root_of(leaves[:k]), m.root_of(leaves)
    assert m.verify_consistency(k, n, old, new, proof)
    if 0 < k < n:
        # a rewritten old leaf: the old root no longer matches the new tree
        forked = leaves_of(k, salt=1)
        assert not m.verify_consistency(k, n, m.root_of(forked), new, proof)
        j = data.draw(st.integers(0, len(proof) - 1))
        bad = list(proof)
        bad[j] = bytes(32)
        assert not m.verify_consistency(k, n, old, new, bad)
        assert not m.verify_consistency(k, n, old, new, proof[:-1])


@settings(max_examples=100, deadline=None)
@given(n=st.integers(0, 300))
def test_range_nodes_fold_to_the_recursive_root(n: int) -> None:
    leaves = leaves_of(n)
    compact = m.CompactTree()
    nodes: dict[m.Node, bytes] = {}
    for leaf in leaves:
        nodes.update(compact.append(leaf))
    assert compact.root() == m.root_of(leaves)
    assert m.range_hash_from(nodes)(0, n) == m.root_of(leaves)
    assert m.fold([nodes[x] for x in m.range_nodes(0, n)]) == m.root_of(leaves)


def test_proofs_outside_the_tree_are_refused() -> None:
    for index, size in ((0, 0), (3, 3), (-1, 4)):
        with pytest.raises(m.ProofError):
            m.inclusion_ranges(index, size)
    for first, second in ((4, 3), (-1, 2)):
        with pytest.raises(m.ProofError):
            m.consistency_ranges(first, second)
    with pytest.raises(m.ProofError):
        m.CompactTree(3, [bytes(32)])

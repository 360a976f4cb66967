"""Edge colouring of regular bipartite multigraphs (König's theorem).

A ρ-regular bipartite multigraph has a proper ρ-edge-colouring. memtune uses
it for the conflict-free schedules of 000 §4.2 (banks to banks) and §5.5 (rows
to rows). The method:

* ρ even — split every node's edges in half with closed alternating walks
  (an Euler partition) and colour each half with ρ/2 colours;
* ρ odd — take one perfect matching (Hopcroft–Karp, scipy), give it its own
  colour, and colour the remaining (ρ−1)-regular graph.

Many independent graphs of the same degree (one per row of a matrix, say) are
coloured at once by giving each a ``group`` number: their nodes never meet.
The walks run under numba; a power-of-two degree needs log2 ρ linear passes.
"""
from __future__ import annotations

import numba
import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from .errors import ParameterError


@numba.njit(cache=True, nogil=True)
def _split_level(left, right, ids, colour, nodes, seg, groups, half):
    """Euler-partition each of ``groups`` consecutive segments of ``seg`` edges.

    Within a segment the nodes are ``0..nodes-1`` on each side and every degree
    is even. Each closed walk alternates 0, 1, 0, …; it enters and leaves every
    inner node once per pass and has even length (the graph is bipartite), so
    every node ends with as many 0-edges as 1-edges. The 1-edges get ``half``
    added to their colour; the returned arrays hold each segment's 0-edges
    first, then its 1-edges, so the next level again works on segments.
    """
    out_left = np.empty_like(left)
    out_right = np.empty_like(right)
    out_ids = np.empty_like(ids)
    start = np.zeros(2 * nodes + 1, np.int64)
    fill = np.empty(2 * nodes, np.int64)
    ptr = np.empty(2 * nodes, np.int64)
    adj = np.empty(2 * seg, np.int32)
    used = np.zeros(seg, np.bool_)
    bit = np.zeros(seg, np.int8)
    for g in range(groups):
        lo = g * seg
        start[:] = 0
        for e in range(seg):
            start[left[lo + e] + 1] += 1
            start[nodes + right[lo + e] + 1] += 1
        for x in range(2 * nodes):
            start[x + 1] += start[x]
        fill[:] = start[:-1]
        for e in range(seg):
            a = left[lo + e]
            b = nodes + right[lo + e]
            adj[fill[a]] = e
            fill[a] += 1
            adj[fill[b]] = e
            fill[b] += 1
        ptr[:] = start[:-1]
        used[:] = False
        for s in range(2 * nodes):
            while True:
                x = s
                c = 0
                while True:
                    while ptr[x] < start[x + 1] and used[adj[ptr[x]]]:
                        ptr[x] += 1
                    if ptr[x] == start[x + 1]:
                        break
                    e = adj[ptr[x]]
                    used[e] = True
                    bit[e] = c
                    c ^= 1
                    x = nodes + right[lo + e] if x < nodes else left[lo + e]
                if ptr[s] == start[s + 1]:
                    break
        zeros = lo
        ones = lo + seg // 2
        for e in range(seg):
            if bit[e] == 0:
                k = zeros
                zeros += 1
            else:
                k = ones
                ones += 1
                colour[ids[lo + e]] += half
            out_left[k] = left[lo + e]
            out_right[k] = right[lo + e]
            out_ids[k] = ids[lo + e]
    return out_left, out_right, out_ids


def _perfect_matching(left, right, nodes):
    """Boolean mask of one perfect matching of a regular bipartite multigraph."""
    support = csr_matrix((np.ones(left.size, dtype=np.int8), (left, right)), shape=(nodes, nodes))
    support.sum_duplicates()
    match = maximum_bipartite_matching(support, perm_type="column")
    if (match < 0).any():  # cannot happen for a regular graph (Hall); guard against bad input
        raise ParameterError("perm", "the bipartite graph is not regular; no perfect matching")
    key = left * nodes + right
    order = np.argsort(key, kind="stable")
    wanted = np.arange(nodes, dtype=np.int64) * nodes + match
    first = order[np.searchsorted(key[order], wanted)]
    mask = np.zeros(left.size, dtype=bool)
    mask[first] = True
    return mask


def edge_colouring(left, right, nodes: int, degree: int, group=None, groups: int = 1) -> np.ndarray:
    """Colour in ``0..degree-1`` for each edge ``(left[e], right[e])``.

    ``group[e]`` (default all 0) separates independent graphs on nodes
    ``0..nodes-1``; every node of every group must have exactly ``degree``
    edges. Edges of one colour then share no node within their group.
    """
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    if left.size != nodes * degree * groups:
        raise ParameterError("degree", f"{left.size} edges cannot form a {degree}-regular graph "
                                       f"on {nodes} nodes x {groups} groups")
    # keep every group's edges contiguous: all work is then local to a segment
    ids = np.arange(left.size, dtype=np.int64)
    if group is not None:
        group = np.asarray(group, dtype=np.int64)
        if (np.diff(group) < 0).any():
            ids = np.argsort(group, kind="stable")
    lft, rgt = left[ids].astype(np.int32), right[ids].astype(np.int32)
    colour = np.zeros(left.size, dtype=np.int64)
    while degree > 1:
        seg = nodes * degree
        if degree % 2 == 0:
            lft, rgt, ids = _split_level(lft, rgt, ids, colour, nodes, seg, groups, degree // 2)
            groups *= 2
            degree //= 2
        else:
            seg_of = np.arange(lft.size, dtype=np.int64) // seg
            matched = _perfect_matching(seg_of * nodes + lft, seg_of * nodes + rgt, nodes * groups)
            colour[ids[matched]] += degree - 1
            keep = ~matched
            ids, lft, rgt = ids[keep], lft[keep], rgt[keep]
            degree -= 1
    return colour


def check_colouring(left, right, colour, group=None) -> bool:
    """True when no two edges of one colour (and group) share a node."""
    g = np.zeros(len(left), dtype=np.int64) if group is None else np.asarray(group)
    for side in (np.asarray(left), np.asarray(right)):
        key = np.stack([g, np.asarray(colour), side], axis=1)
        if np.unique(key, axis=0).shape[0] != key.shape[0]:
            return False
    return True

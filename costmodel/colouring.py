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

Two ways to split a level in half, one per kind of processor:

* on the CPU (default), closed alternating walks under numba: sequential and
  linear, a power-of-two degree needs log2 ρ passes;
* on an array module (``xp``: numpy, or cupy for the GPU), *pairing*: pair
  each node's edges two by two on the left and on the right; the pairs link
  the edges into cycles of even length, and colouring each cycle alternately
  balances every node. The alternation comes from pointer jumping (the
  smallest edge id of each orbit of f = R∘L, in log2 of the segment's size
  data-parallel steps), so the whole level is gathers, scatters and one
  prefix sum: what a GPU does at memory speed. Each level keeps its edges
  sorted by (segment, left) and (segment, right) with a stable partition,
  so only the first level sorts.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import maximum_bipartite_matching

from .errors import ParameterError


@functools.lru_cache(maxsize=None)
def _compiled_split_level():
    """``_split_level`` under numba, compiled (or loaded from numba's cache) on the first CPU colouring:
    importing numba costs every process about half a second, and most never colour on the CPU."""
    import numba

    return numba.njit(cache=True, nogil=True)(_split_level)


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


def _check_regular_size(size: int, nodes: int, degree: int, groups: int) -> None:
    if size != nodes * degree * groups:
        raise ParameterError("degree", f"{size} edges cannot form a {degree}-regular graph "
                                       f"on {nodes} nodes x {groups} groups")


def edge_colouring(left, right, nodes: int, degree: int, group=None, groups: int = 1, xp=None):
    """Colour in ``0..degree-1`` for each edge ``(left[e], right[e])``.

    ``group[e]`` (default all 0) separates independent graphs on nodes
    ``0..nodes-1``; every node of every group must have exactly ``degree``
    edges. Edges of one colour then share no node within their group.
    With ``xp`` (numpy or cupy) the levels are split by pairing on arrays of
    that module and the colours come back as one of its arrays.
    """
    if xp is not None:
        return _pairing_colouring(xp, left, right, nodes, degree, group, groups)
    left = np.asarray(left, dtype=np.int64)
    right = np.asarray(right, dtype=np.int64)
    _check_regular_size(left.size, nodes, degree, groups)
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
            lft, rgt, ids = _compiled_split_level()(lft, rgt, ids, colour, nodes, seg, groups, degree // 2)
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


# --- the array version: pairing and pointer jumping -------------------------------------------

@dataclass
class _Level:
    """The edges left to colour, sorted by (segment, left); ``by_right`` lists them by (segment, right).

    A segment is one independent ``degree``-regular graph of ``seg = nodes × degree`` edges, at
    positions ``k·seg .. (k+1)·seg − 1`` of both orders.
    """

    ids: object        # original edge index at each position
    left: object       # (segment, left) key at each position, for the odd-degree matching
    right: object
    by_right: object   # positions in (segment, right) order
    seg: int


def _pairing_colouring(xp, left, right, nodes, degree, group, groups):
    left = xp.asarray(left).astype(xp.int64)
    right = xp.asarray(right).astype(xp.int64)
    _check_regular_size(int(left.size), nodes, degree, groups)
    key_left, key_right = left, right
    if group is not None:           # (group, node) as one key: group × nodes + node
        base = xp.asarray(group).astype(xp.int64) * nodes
        key_left, key_right = base + left, base + right
    order = xp.argsort(key_left)
    key_right = key_right[order]
    level = _Level(order.astype(xp.int64), key_left[order], key_right, xp.argsort(key_right), nodes * degree)
    colour = xp.zeros(left.size, dtype=xp.int64)
    while degree > 1:
        if degree % 2:
            level = _drop_matching(xp, level, colour, nodes, degree)
            degree -= 1
        else:
            level = _split_by_pairing(xp, level, colour, nodes, degree // 2)
            degree //= 2
    return colour


def _stable_halves(xp, bit, seg: int, i):
    """New position of each entry ``i`` when every segment puts its 0-entries, then its 1-entries, in order."""
    ones_before = xp.cumsum(bit, dtype=xp.int64) - bit
    ones_before -= xp.repeat(ones_before[::seg], seg)
    start = i - i % seg
    return xp.where(bit == 1, start + seg // 2 + ones_before, i - ones_before)


def _split_by_pairing(xp, level: _Level, colour, nodes: int, half: int) -> _Level:
    m = level.ids.size
    pos = xp.arange(m, dtype=xp.int64)
    left_mate = pos ^ 1                     # a (segment, left) run has even length and starts even
    right_mate = xp.empty_like(pos)
    right_mate[level.by_right] = level.by_right[left_mate]
    rep, jump = pos, right_mate[left_mate]  # f = R∘L: two edges along a cycle
    for _ in range(max(1, (level.seg // 2 - 1).bit_length())):
        rep = xp.minimum(rep, rep[jump])
        jump = jump[jump]
    # e and L(e) lie in the two orbits of one cycle, and so do e and R(e): opposite bits
    bit = (rep > rep[left_mate]).astype(xp.int64)
    colour[level.ids] += bit * half
    # segment k splits into 2k (its 0-edges) and 2k + 1: key k·nodes + v becomes (2k + bit)·nodes + v
    moved = [level.ids] + [key + (key // nodes + bit) * nodes for key in (level.left, level.right)]
    new_pos = _stable_halves(xp, bit, level.seg, pos)
    ids, lkey, rkey = (xp.empty_like(x) for x in moved)
    ids[new_pos], lkey[new_pos], rkey[new_pos] = moved
    by_right = xp.empty_like(level.by_right)
    by_right[_stable_halves(xp, bit[level.by_right], level.seg, pos)] = new_pos[level.by_right]
    return _Level(ids, lkey, rkey, by_right, level.seg // 2)


def _drop_matching(xp, level: _Level, colour, nodes: int, degree: int) -> _Level:
    """Odd degree: one perfect matching (on the host, scipy) takes colour degree − 1."""
    to_host = (lambda a: a.get()) if hasattr(level.ids, "get") else (lambda a: a)
    lkey, rkey = to_host(level.left), to_host(level.right)
    matched = xp.asarray(_perfect_matching(lkey, rkey, nodes * (lkey.size // level.seg)))
    colour[level.ids[matched]] += degree - 1
    keep = ~matched
    new_index = xp.cumsum(keep, dtype=xp.int64) - 1
    by_right = new_index[level.by_right[keep[level.by_right]]]
    return _Level(level.ids[keep], level.left[keep], level.right[keep], by_right, nodes * (degree - 1))


def check_colouring(left, right, colour, group=None) -> bool:
    """True when no two edges of one colour (and group) share a node."""
    g = np.zeros(len(left), dtype=np.int64) if group is None else np.asarray(group)
    for side in (np.asarray(left), np.asarray(right)):
        key = np.stack([g, np.asarray(colour), side], axis=1)
        if np.unique(key, axis=0).shape[0] != key.shape[0]:
            return False
    return True

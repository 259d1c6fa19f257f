"""Debian's python3-sortedcontainers (SortedList), served by the Python shim
for specs/sortedlist.dspec (docs/interfaces.md, docs/real-servers.md).

SortedList is mutable; each op that changes one works on a copy, so every
handle the tester holds keeps the value it was made with (the laws compare a
list before and after an operation).
"""
from sortedcontainers import SortedList


def _changed(s, fn):
    t = s.copy()
    fn(t)
    return t


TYPES = {"slist": SortedList}
OPS = {
    "empty": lambda: SortedList(),
    "of": lambda xs: SortedList(xs),
    "add": lambda s, x: _changed(s, lambda t: t.add(x)),
    "discard": lambda s, x: _changed(s, lambda t: t.discard(x)),
    "remove": lambda s, x: _changed(s, lambda t: t.remove(x)),
    "update": lambda s, xs: _changed(s, lambda t: t.update(xs)),
    "pop_last": lambda s: s.copy().pop(),
    "without_last": lambda s: _changed(s, lambda t: t.pop()),
    "to_list": lambda s: list(s),
    "length": lambda s: len(s),
    "contains": lambda s, x: x in s,
    "count": lambda s, x: s.count(x),
    "index": lambda s, x: s.index(x),
    "bisect_left": lambda s, x: s.bisect_left(x),
    "bisect_right": lambda s, x: s.bisect_right(x),
    "at": lambda s, i: s[i],
    "irange": lambda s, lo, hi: list(s.irange(lo, hi)),
}

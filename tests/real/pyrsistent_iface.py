"""Debian's python3-pyrsistent (PVector and PMap), served by the Python shim
for specs/pyrsistent.dspec (docs/interfaces.md, docs/real-servers.md).

Both are persistent: every operation returns a new value and leaves its
argument as it was, which is one of the laws.
"""
from pyrsistent import pmap, pvector, PVector, PMap

TYPES = {"pvec": PVector, "pmap": PMap}
OPS = {
    "vec": lambda xs: pvector(xs),
    "append": lambda v, x: v.append(x),
    "set_at": lambda v, i, x: v.set(i, x),
    "delete_at": lambda v, i: v.delete(i),
    "get_at": lambda v, i: v[i],
    "vlen": lambda v: len(v),
    "vlist": lambda v: list(v),
    "extend": lambda v, xs: v.extend(xs),
    "map_empty": lambda: pmap(),
    "put": lambda m, k, x: m.set(k, x),
    "lookup": lambda m, k: m.get(k),
    "discard": lambda m, k: m.discard(k),
    "remove_key": lambda m, k: m.remove(k),
    "has_key": lambda m, k: k in m,
    "mlen": lambda m: len(m),
    "sorted_keys": lambda m: sorted(m.keys()),
}

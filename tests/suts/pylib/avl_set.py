"""A persistent AVL-tree set of ints, the reference library for
specs/avl_set.dspec (docs/interfaces.md), served by shims/python.

Mutants (ARGS["mutant"], tests/suts/MUTANTS.md):
  1  a left-right imbalance is rotated as left-left (the balance breaks)
  2  removing a node with two children drops its right subtree
  3  adding an element already there counts it again in the size
"""
MUTANT = int(globals().get("ARGS", {}).get("mutant", "0"))


class Node:
    __slots__ = ("key", "left", "right", "height", "size")

    def __init__(self, key, left, right):
        self.key, self.left, self.right = key, left, right
        self.height = 1 + max(height(left), height(right))
        self.size = 1 + size_of(left) + size_of(right)


def height(t):
    return t.height if t else 0


def size_of(t):
    return t.size if t else 0


def rotate_right(t):
    l = t.left
    return Node(l.key, l.left, Node(t.key, l.right, t.right))


def rotate_left(t):
    r = t.right
    return Node(r.key, Node(t.key, t.left, r.left), r.right)


def balance(t):
    b = height(t.left) - height(t.right)
    if b > 1:
        if height(t.left.left) < height(t.left.right) and MUTANT != 1:
            t = Node(t.key, rotate_left(t.left), t.right)
        return rotate_right(t)
    if b < -1:
        if height(t.right.right) < height(t.right.left):
            t = Node(t.key, t.left, rotate_right(t.right))
        return rotate_left(t)
    return t


def insert(t, k):
    if t is None:
        return Node(k, None, None)
    if k < t.key:
        return balance(Node(t.key, insert(t.left, k), t.right))
    if k > t.key:
        return balance(Node(t.key, t.left, insert(t.right, k)))
    return t


def delete_min(t):
    if t.left is None:
        return t.right, t.key
    left, m = delete_min(t.left)
    return balance(Node(t.key, left, t.right)), m


def delete(t, k):
    if t is None:
        return None
    if k < t.key:
        return balance(Node(t.key, delete(t.left, k), t.right))
    if k > t.key:
        return balance(Node(t.key, t.left, delete(t.right, k)))
    if t.left is None:
        return t.right
    if t.right is None:
        return t.left
    if MUTANT == 2:
        return t.left
    right, m = delete_min(t.right)
    return balance(Node(m, t.left, right))


class AvlSet:
    def __init__(self, root=None, extra=0):
        self.root, self.extra = root, extra

    def add(self, k):
        extra = self.extra + (1 if MUTANT == 3 and member(self.root, k) else 0)
        return AvlSet(insert(self.root, k), extra)

    def remove(self, k):
        return AvlSet(delete(self.root, k), self.extra)

    def size(self):
        return size_of(self.root) + self.extra


def member(t, k):
    while t is not None:
        if k == t.key:
            return True
        t = t.left if k < t.key else t.right
    return False


def elements(t, out):
    if t is not None:
        elements(t.left, out)
        out.append(t.key)
        elements(t.right, out)
    return out


def invariant(t, lo=None, hi=None):
    """Search order and AVL balance (the library's own check)."""
    if t is None:
        return True
    if (lo is not None and t.key <= lo) or (hi is not None and t.key >= hi):
        return False
    if abs(height(t.left) - height(t.right)) > 1:
        return False
    return invariant(t.left, lo, t.key) and invariant(t.right, t.key, hi)


TYPES = {"set": AvlSet}
OPS = {
    "empty": lambda: AvlSet(),
    "add": lambda s, x: s.add(x),
    "remove": lambda s, x: s.remove(x),
    "mem": lambda s, x: member(s.root, x),
    "size": lambda s: s.size(),
    "elements": lambda s: elements(s.root, []),
    "invariant": lambda s: invariant(s.root),
}

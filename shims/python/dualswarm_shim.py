#!/usr/bin/env python3
"""Serves a Python library to Dualswarm over the library protocol.

The protocol (docs/interfaces.md): JSON lines over TCP, one call per line,
one answer per line, in order:
    {"call": "add", "args": [{"$set": 3}, 5]}  ->  {"ret": {"$set": 4}}
                                               or  {"exn": "KeyError: 5"}
                                               or  {"error": "unknown handle 3"}
A value of an abstract type travels as a handle {"$TYPE": N}: the shim keeps
the object, the tester only the number. Fields other than "call" and "args"
(the tester's "law" tag) are ignored.

The library is described by an interface module (a .py file) that defines
    TYPES = {"set": AvlSet, ...}   # abstract types: a result that is an
                                   # instance of the class becomes a handle
    OPS = {"add": fn, ...}         # the signature's operations
It may read ARGS (a dict from the shim's --arg K=V options).

usage: dualswarm_shim.py --port PORT [--host 127.0.0.1] [--arg K=V]... INTERFACE.py
"""
import argparse
import importlib.util
import inspect
import json
import socketserver
import sys
import threading

MAX_LINE = 1 << 20       # bytes in one request line
MAX_HANDLES = 1_000_000  # objects kept


class Library:
    def __init__(self, module):
        self.types = dict(getattr(module, "TYPES", {}))
        self.ops = dict(module.OPS)
        self.handles = []  # (type name, object)
        self.lock = threading.Lock()  # one call at a time: calls are atomic

    def decode(self, v):
        if isinstance(v, dict) and len(v) == 1:
            (key, n), = v.items()
            if key.startswith("$") and key[1:] in self.types:
                if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < len(self.handles):
                    raise LookupError("unknown handle %r" % (v,))
                kind, obj = self.handles[n]
                if kind != key[1:]:
                    raise LookupError("handle %d is a %s, not a %s" % (n, kind, key[1:]))
                return obj
        if isinstance(v, list):
            return [self.decode(x) for x in v]
        if isinstance(v, dict):
            return {k: self.decode(x) for k, x in v.items()}
        return v

    def encode(self, v):
        for name, cls in self.types.items():
            if isinstance(v, cls):
                if len(self.handles) >= MAX_HANDLES:
                    raise OverflowError("more than %d handles (limit of the shim)" % MAX_HANDLES)
                self.handles.append((name, v))
                return {"$" + name: len(self.handles) - 1}
        if v is None or isinstance(v, (bool, int, str)):
            return v
        if isinstance(v, (list, tuple)):
            return [self.encode(x) for x in v]
        if isinstance(v, dict):
            return {str(k): self.encode(x) for k, x in v.items()}
        raise TypeError("a result of type %s is neither JSON nor one of TYPES" % type(v).__name__)

    def answer(self, line):
        try:
            req = json.loads(line)
        except Exception as e:  # ValueError, RecursionError (too deep)
            return {"error": "not JSON: %s" % e}
        if not isinstance(req, dict) or not isinstance(req.get("call"), str) or \
                not isinstance(req.get("args", []), list):
            return {"error": "expected {\"call\": NAME, \"args\": [...]}"}
        fn = self.ops.get(req["call"])
        if fn is None:
            return {"error": "unknown operation %r" % req["call"]}
        with self.lock:
            try:
                args = self.decode(req.get("args", []))
                inspect.signature(fn).bind(*args)
            except (LookupError, TypeError, RecursionError) as e:
                return {"error": "%s: %s" % (req["call"], e)}
            except ValueError:
                pass  # a builtin without a signature: its own TypeError will tell
            try:
                result = fn(*args)
            except Exception as e:  # the library raised: an answer, not a shim error
                return {"exn": "%s: %s" % (type(e).__name__, e)}
            try:
                return {"ret": self.encode(result)}
            except Exception as e:  # not JSON, too deep, too many handles
                return {"error": "%s: %s" % (req["call"], e)}


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--arg", action="append", default=[], help="K=V, given to the interface as ARGS")
    p.add_argument("interface")
    a = p.parse_args()
    spec = importlib.util.spec_from_file_location("interface", a.interface)
    module = importlib.util.module_from_spec(spec)
    module.ARGS = dict(kv.split("=", 1) for kv in a.arg)
    spec.loader.exec_module(module)
    lib = Library(module)

    class Handler(socketserver.StreamRequestHandler):
        def handle(self):
            while True:
                line = self.rfile.readline(MAX_LINE + 1)
                if not line:
                    return
                if len(line) > MAX_LINE:
                    self.wfile.write(b'{"error":"request line too long"}\n')
                    return
                if not line.strip():
                    continue
                try:
                    out = json.dumps(lib.answer(line), separators=(",", ":"))
                except Exception as e:  # a result json cannot write (too deep)
                    out = json.dumps({"error": "answer not JSON: %s" % e})
                self.wfile.write(out.encode() + b"\n")

    socketserver.ThreadingTCPServer.allow_reuse_address = True
    socketserver.ThreadingTCPServer.daemon_threads = True
    with socketserver.ThreadingTCPServer((a.host, a.port), Handler) as server:
        server.serve_forever()


if __name__ == "__main__":
    sys.exit(main())

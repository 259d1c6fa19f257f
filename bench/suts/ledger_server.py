#!/usr/bin/env python3
"""The ledger of bench/specs/ledger.dspec over JSON lines on 127.0.0.1.

  python3 bench/suts/ledger_server.py --port P [--mutant N]

Mutant 1: an amount of 0 is accepted (answers the balance) instead of
refused: a boundary bug only an amount of exactly 0 shows.
"""
import argparse
import json
import socketserver
import threading

lock = threading.Lock()  # guards balance
balance = 1000
mutant = 0


def answer(q):
    global balance
    amount = q.get("amount")
    if not isinstance(amount, int) or amount < 0 or (amount == 0 and mutant != 1):
        return {"error": "invalid amount"}
    if q.get("memo") == "refund":
        return {"error": "refunds go through support"}
    with lock:
        if q.get("op") == "deposit":
            if amount > 99000:
                return {"error": "needs review"}
            balance += amount
            return {"balance": balance}
        if amount > balance:
            return {"error": "insufficient funds"}
        balance -= amount
        return {"balance": balance}


class Handler(socketserver.StreamRequestHandler):
    def handle(self):
        for line in self.rfile:
            try:
                reply = answer(json.loads(line))
            except (ValueError, AttributeError):
                reply = {"error": "bad request"}
            self.wfile.write((json.dumps(reply) + "\n").encode())
            self.wfile.flush()


class Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


def main():
    global mutant
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--mutant", type=int, default=0)
    args = p.parse_args()
    mutant = args.mutant
    with Server(("127.0.0.1", args.port), Handler) as server:
        print(f"listening on 127.0.0.1:{server.server_address[1]}", flush=True)
        server.serve_forever()


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""One Markdown table row from `dualswarm test --json` results, one JSON
document per line on stdin (a line that does not parse counts as an
"error" outcome). Used by the fault benches (bench/run_*_fault_bench.sh).

Usage: json_row.py findings LABEL   runs, outcomes, findings, seconds and
                                    requests to a finding, faults
       json_row.py runs LABEL       runs, outcomes, findings, seconds of
                                    every run, faults
"""
import json
import statistics
import sys


def pair(xs, fmt):
    """median / max, or a dash for no values."""
    return fmt.format(statistics.median(xs)) + " / " + fmt.format(max(xs)) if xs else "–"


def main():
    mode, label = sys.argv[1], sys.argv[2]
    rs = []
    for line in sys.stdin:
        try:
            rs.append(json.loads(line))
        except ValueError:
            rs.append({"kind": "error"})
    kinds = {}
    for r in rs:
        kinds[r.get("kind")] = kinds.get(r.get("kind"), 0) + 1
    outcomes = ", ".join("%s %d" % kv for kv in sorted(kinds.items()))
    found = [r for r in rs if r.get("kind") in ("safety", "liveness", "sut-crash", "property")]
    ran = [r for r in rs if "seconds" in r]
    if mode == "findings":
        cells = [pair([r["seconds"] for r in found], "{:.2f}"), pair([r["requests"] for r in found], "{:.0f}"),
                 pair([r.get("faults", 0) for r in (found or ran)], "{:.0f}")]
    else:
        cells = [pair([r["seconds"] for r in ran], "{:.2f}"), pair([r.get("faults", 0) for r in ran], "{:.0f}")]
    print("| %s | %d | %s | %d | %s |" % (label, len(rs), outcomes, len(found), " | ".join(cells)))


if __name__ == "__main__":
    main()

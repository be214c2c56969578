#!/usr/bin/env python3
"""Measures, in a Chrome trace of distir simulate, how communication overlaps compute.

With a communication stream per device (otherData.comm_stream) each device has a
thread "dN compute" and a thread "dN comm" (docs/results_format.md, "Chrome trace").
For each device this prints one line: its communication slices, how many of them
overlap a compute slice of the same device, and the overlapped time in
microseconds (the measure of the union of comm slices intersected with the union
of compute slices). Exits 1 when the trace has no communication stream, or when a
comm thread holds a compute slice (or the reverse).
"""
import json
import sys


def fail(msg):
    print("error: " + msg)
    sys.exit(1)


def intersection(a, b):
    """Total length of the intersection of two lists of disjoint [s, e) intervals."""
    total, i, j = 0.0, 0, 0
    a, b = sorted(a), sorted(b)
    while i < len(a) and j < len(b):
        lo, hi = max(a[i][0], b[j][0]), min(a[i][1], b[j][1])
        total += max(0.0, hi - lo)
        if a[i][1] < b[j][1]:
            i += 1
        else:
            j += 1
    return total


def main(path):
    with open(path) as f:
        trace = json.load(f)
    if not trace.get("otherData", {}).get("comm_stream"):
        fail("the trace has no communication stream")
    names, slices = {}, {}
    for e in trace["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
        elif e["ph"] == "X":
            slices.setdefault((e["pid"], e["tid"]), []).append(e)
    tracks = {}
    for key, events in slices.items():
        device, stream = names[key].split()
        for e in events:
            if (e["cat"] == "communication") != (stream == "comm"):
                fail("%s slice %s on thread %s" % (e["cat"], e["name"], names[key]))
        tracks.setdefault(device, {})[stream] = [(e["ts"], e["ts"] + e["dur"]) for e in events]
    for device in sorted(tracks, key=lambda d: int(d[1:])):
        comm = tracks[device].get("comm", [])
        compute = tracks[device].get("compute", [])
        hit = sum(1 for c in comm if intersection([c], compute) > 0)
        print("%s: %d comm slices, %d overlap compute, overlapped %.3f us"
              % (device, len(comm), hit, intersection(comm, compute)))


if __name__ == "__main__":
    main(sys.argv[1])

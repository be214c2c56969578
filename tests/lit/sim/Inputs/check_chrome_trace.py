#!/usr/bin/env python3
"""Checks that a file is a Chrome trace in the layout of src/sim/chrome_trace.h.

The JSON object format of the Trace Event Format (what chrome://tracing and
Perfetto load): every event has the keys its phase needs, every process and
thread used is named, every op slice has positive duration and its args, and
every flow has one start and one end, each inside a slice of its thread.
Prints one summary line; exits 1 with the first problem.
"""
import json
import sys


def fail(msg):
    print("error: " + msg)
    sys.exit(1)


def need(event, keys):
    for key, kind in keys.items():
        if key not in event or not isinstance(event[key], kind):
            fail("event %r lacks %s of type %s" % (event, key, kind))


def main(path):
    with open(path) as f:
        trace = json.load(f)
    if not isinstance(trace, dict) or not isinstance(trace.get("traceEvents"), list):
        fail("no traceEvents list")
    num = (int, float)
    processes, threads, slices, flows = set(), set(), {}, {}
    for e in trace["traceEvents"]:
        need(e, {"name": str, "ph": str, "pid": int})
        ph = e["ph"]
        if ph == "M":
            need(e, {"args": dict})
            if e["name"] == "process_name":
                processes.add(e["pid"])
            elif e["name"] == "thread_name":
                threads.add((e["pid"], e["tid"]))
            elif e["name"] not in ("process_sort_index", "thread_sort_index"):
                fail("unknown metadata " + e["name"])
        elif ph == "X":
            need(e, {"tid": int, "ts": num, "dur": num, "cat": str, "args": dict})
            if e["dur"] <= 0:
                fail("zero-duration slice " + e["name"])
            need(e["args"], {"op": str, "bytes": int, "inputs": list, "outputs": list})
            slices.setdefault((e["pid"], e["tid"]), []).append((e["ts"], e["ts"] + e["dur"]))
        elif ph in ("s", "f"):
            need(e, {"tid": int, "ts": num, "id": int, "cat": str})
            flows.setdefault(e["id"], []).append(e)
        elif ph == "C":
            need(e, {"ts": num, "args": dict})
        else:
            fail("unexpected phase " + ph)
    for pid, tid in slices:
        if pid not in processes or (pid, tid) not in threads:
            fail("unnamed track pid %d tid %d" % (pid, tid))
    for fid, ends in flows.items():
        if sorted(e["ph"] for e in ends) != ["f", "s"]:
            fail("flow %d does not have one start and one end" % fid)
        for e in ends:
            if e["ph"] == "f" and e.get("bp") != "e":
                fail("flow end %d does not bind to its enclosing slice" % fid)
            track = slices.get((e["pid"], e["tid"]), [])
            if not any(b <= e["ts"] < end for b, end in track):
                fail("flow %d has no slice at ts %s on pid %d tid %d"
                     % (fid, e["ts"], e["pid"], e["tid"]))
    print("valid chrome trace: %d processes, %d threads, %d slices, %d flows"
          % (len(processes), len(threads), sum(len(s) for s in slices.values()), len(flows)))


if __name__ == "__main__":
    main(sys.argv[1])

#!/usr/bin/env python3
"""Re-simulates the configurations of a measured results file on another hardware profile.

    python3 scripts/resimulate.py RESULTS.h5 --hardware PROFILE.yaml -o OUT.h5 \\
        [--distir build/dev/src/tools/distir]
    distir validate OUT.h5

For a results file that `distir run` has measured (it has /measured): takes the experiment
YAML stored in it (/experiment/yaml), points its `hardware:` at PROFILE.yaml, runs
`distir search` on it into OUT.h5, checks that the search produced the same configurations
in the same order, and copies /measured and /run into OUT.h5. `distir validate OUT.h5` then
compares the new profile's predictions with the runs already measured: how a recalibrated
or changed profile would have ranked them, without the machine (docs/calibration.md §5.4).
Relative paths in the experiment (an ONNX model) resolve from OUT.h5's folder, where the
rewritten YAML is written (OUT.experiment.yaml). Exits 1 with a message on any mismatch;
OUT.h5 is then removed.
"""
import argparse
import os
import re
import subprocess
import sys

import h5py
import numpy as np

# Columns that name a configuration (the rest are simulated figures).
IDENTITY = ["batch", "dp", "tp", "pp", "microbatches", "micro_batch", "recompute",
            "recompute_kind", "schedule", "virtual_stages", "zero_stage", "sequence_parallel"]


def fail(message, out=None):
    if out and os.path.exists(out):
        os.remove(out)
    sys.exit(f"error: resimulate.py: {message}")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("results")
    p.add_argument("--hardware", required=True)
    p.add_argument("-o", "--output", required=True)
    p.add_argument("--distir", default="distir")
    args = p.parse_args()
    if os.path.abspath(args.results) == os.path.abspath(args.output):
        fail("the output must be another file than the results it re-simulates")
    with h5py.File(args.results, "r") as src:
        if "measured" not in src:
            fail(f"{args.results} has no /measured: run `distir run` on it first")
        text = src["experiment/yaml"][()]
    text = text.decode() if isinstance(text, bytes) else str(text)
    hardware = os.path.abspath(args.hardware)
    text, n = re.subn(r"(?m)^hardware:.*$", f"hardware: '{hardware}'", text)
    if n != 1:
        fail(f"the experiment in {args.results} has no top-level 'hardware:' line to replace")
    exp = os.path.splitext(args.output)[0] + ".experiment.yaml"
    if os.path.abspath(exp) == hardware:
        fail(f"the rewritten experiment would overwrite the profile {args.hardware}: choose another -o")
    with open(exp, "w") as f:
        f.write(text)
    search = subprocess.run([args.distir, "search", exp, "-o", args.output, "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if search.returncode != 0:
        fail(f"distir search {exp} failed:\n{search.stdout}", args.output)
    with h5py.File(args.results, "r") as src, h5py.File(args.output, "a") as dst:
        old, new = src["configs"], dst["configs"]
        for key in IDENTITY:
            if key in old and key in new and not np.array_equal(old[key][()], new[key][()]):
                fail(f"configuration column '{key}' differs between {args.results} and the new "
                     "search: not the same configurations", args.output)
        if len(old["index"]) != len(new["index"]):
            fail(f"{len(old['index'])} configurations in {args.results}, {len(new['index'])} in "
                 "the new search", args.output)
        for group in ("measured", "run"):
            if group in src:
                if group in dst:  # the search's own (empty) /run
                    del dst[group]
                src.copy(group, dst)
    print(f"wrote {args.output}: {args.results}'s measured runs with the configurations "
          f"simulated on {args.hardware}")


if __name__ == "__main__":
    main()

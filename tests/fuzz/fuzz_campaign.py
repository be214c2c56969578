#!/usr/bin/python3
"""The fuzz campaign over distir's input formats (issue 20, item 5; docs/fuzzing.md).

For each format (IR text, experiment YAML, hardware YAML, ONNX, HDF5 results)
it mutates valid seed inputs with seeded mutators (mutators.py, h5_mutators.py),
runs the distir command that reads them under a timeout, and classifies each case:

  ok          exit 0, and the output agrees with itself (consistency.py)
  error       exit 1 with an `error:` line; `located` counts those that name the
              input file (with file:line:col where it is text)
  crash       a signal, a sanitizer report, a failed check, an uncaught exception,
              or a non-zero exit without an error message
  hang        still running at the timeout
  wrong       exit 0 with an output that contradicts itself
  leftover    a file left behind (.tmp, .journal, .lock, an output after an error),
              or an input changed by a command that failed

It exits 1 when any case is a crash, hang, wrong result or leftover; each such
case keeps its directory (the input, `command`, `stdout`, `stderr`) under
WORK/<format>/<index>/, and `--format F --case I` runs it again. Case I of a
format is built from random.Random("SEED/F/I") alone.

  usage: fuzz_campaign.py --distir BIN --source-dir SRC --work-dir DIR
                          [--format F ...] [--cases N] [--seed S] [--jobs J] [--case I]
"""

import argparse
import concurrent.futures
import hashlib
import os
import random
import re
import resource
import shutil
import signal
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import formats  # noqa: E402

MEMORY_LIMIT = 3 << 30  # bytes of address space per process (not under the sanitizers)
CATEGORIES = ["ok", "error", "located", "crash", "hang", "wrong", "leftover"]
FAILURES = ("crash", "hang", "wrong", "leftover")

_CRASH_MARKERS = ("AddressSanitizer", "LeakSanitizer", "runtime error:", "check failed:",
                  "terminate called", "Segmentation fault", "stack overflow", "std::bad_alloc",
                  "HDF5-DIAG")
# `file:line:col: error:` or `file: error:` or `'file': ...` naming the input.
_LOCATED = re.compile(r"(\S+?):(\d+:\d+: )?\s*error:")


class Context:
    def __init__(self, args):
        self.distir = os.path.abspath(args.distir)
        self.source_dir = os.path.abspath(args.source_dir)
        self.break_results = args.break_results and os.path.abspath(args.break_results)
        self.timeout = args.timeout
        self.env = dict(os.environ)
        self.env.update({"OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
                         "OMPI_MCA_mca_base_component_disable_dlclose": "1"})
        # `distir search` runs as an MPI singleton: without its helper daemon and with
        # only the loopback transport it starts in half the CPU time and a quarter of
        # the wall time (it has no peer to talk to either way).
        self.env.update({"OMPI_MCA_ess_singleton_isolated": "1", "OMPI_MCA_pml": "ob1",
                         "OMPI_MCA_btl": "self"})
        if self.env.get("LSAN_OPTIONS"):
            self.env["LSAN_OPTIONS"] += ":fast_unwind_on_malloc=0"
        self.sanitized = args.sanitized


class Result:
    def __init__(self, index, category, detail="", located=False):
        self.index, self.category, self.detail, self.located = index, category, detail, located


def _run(ctx, argv, cwd, env):
    """(returncode or None on timeout, stdout, stderr); the whole process group is
    killed at the timeout (a search's MPI helper processes too)."""
    proc = subprocess.Popen([ctx.distir] + argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)
    try:
        out, err = proc.communicate(timeout=ctx.timeout)
        return proc.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        return None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace")


def _crash_reason(rc, stderr):
    if rc < 0:
        return f"killed by signal {signal.Signals(-rc).name}"
    for marker in _CRASH_MARKERS:
        if marker in stderr:
            return f"exit {rc}, stderr has '{marker}'"
    if rc not in (0, 1):
        return f"exit {rc}"
    if rc == 1 and "error:" not in stderr:
        return "exit 1 without an error message"
    return None


def _tail(text, lines=8, width=200):
    """The first lines of `text` (where the error or the sanitizer's report starts),
    each cut to `width` characters."""
    return "\n    ".join(line[:width] for line in text.strip().splitlines()[:lines])


def _is_located(stderr, inputs):
    for m in _LOCATED.finditer(stderr):
        if any(name in m.group(1) for name in inputs) or m.group(2):
            return True
    return any(f"'{name}'" in stderr or f"{name}:" in stderr for name in inputs)


def _digest(case_dir, names):
    out = {}
    for name in names:
        path = os.path.join(case_dir, name)
        if os.path.isfile(path):
            with open(path, "rb") as fh:
                out[name] = hashlib.sha256(fh.read()).hexdigest()
    return out


def _files(case_dir):
    found = []
    for root, dirs, files in os.walk(case_dir):
        for name in dirs + files:
            rel = os.path.relpath(os.path.join(root, name), case_dir)
            if rel not in ("command", "stdout", "stderr"):
                found.append(rel)
    return sorted(found)


def _leftovers(case, case_dir, ok, before):
    allowed = set(case.inputs) | (set(case.outputs) if ok else set())
    extra = [f for f in _files(case_dir) if f not in allowed]
    if extra:
        return f"left behind: {extra}"
    if not ok and _digest(case_dir, case.inputs) != before:
        return f"an input changed although the command failed: {case.inputs}"
    return None


def _follow_ups(ctx, case, case_dir):
    for argv, what in case.follow_ups:
        rc, out, err = _run(ctx, argv, case_dir, case.env)
        if rc != 0:
            return f"follow-up '{what}' ({' '.join(argv)}) exit {rc}: {_tail(err, lines=3)}"
    return None


def _classify(ctx, fmt, case, case_dir, rc, out, err, before):
    if rc is None:
        return "hang", f"no exit within {ctx.timeout} s", False
    crash = _crash_reason(rc, err)
    if crash:
        return "crash", f"{crash}: {_tail(err)}", False
    leftover = _leftovers(case, case_dir, rc == 0, before)
    if rc != 0:
        if leftover:
            return "leftover", leftover, False
        return "error", _tail(err, lines=1), _is_located(err, case.inputs)
    follow = _follow_ups(ctx, case, case_dir)
    if follow:
        return "wrong", follow, False
    try:
        problems = fmt.check_ok(case, case_dir, out)
    except Exception as e:  # an output the checks cannot even read is wrong too
        problems = [f"the output does not read as documented: {type(e).__name__}: {e}"]
    if problems:
        return "wrong", "; ".join(problems), False
    leftover = _leftovers(case, case_dir, True, before)
    if leftover:
        return "leftover", leftover, False
    return "ok", "", False


def run_case(ctx, fmt, seed, index, work_dir, keep):
    rng = random.Random(f"{seed}/{fmt.name}/{index}")
    case_dir = os.path.join(work_dir, fmt.name, str(index))
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(case_dir)
    case = fmt.make_case(rng, case_dir)
    before = _digest(case_dir, case.inputs)
    # Each case has its own MPI session directory: isolated singletons started at
    # once would otherwise share, create and remove the same one.
    session = os.path.join(work_dir, "mpi-sessions", f"{fmt.name}-{index}")
    os.makedirs(session, exist_ok=True)
    case.env = dict(ctx.env, OMPI_MCA_orte_tmpdir_base=session)
    rc, out, err = _run(ctx, case.argv, case_dir, case.env)
    category, detail, located = _classify(ctx, fmt, case, case_dir, rc, out, err, before)
    if category in FAILURES or keep:
        for name, text in (("command", "distir " + " ".join(case.argv) + "\n"), ("stdout", out),
                           ("stderr", err)):
            with open(os.path.join(case_dir, name), "w", encoding="utf-8") as fh:
                fh.write(text)
    else:
        shutil.rmtree(case_dir, ignore_errors=True)
    shutil.rmtree(session, ignore_errors=True)
    return Result(index, category, detail, located)


def run_format(ctx, name, args, work_dir):
    fmt = formats.FORMATS[name](ctx)
    fmt.prepare(work_dir)
    indices = [args.case] if args.case is not None else range(args.first, args.first + args.cases)
    jobs = args.jobs * (3 if fmt.uses_mpi else 1)  # a singleton MPI launch mostly waits
    counts = dict.fromkeys(CATEGORIES, 0)
    failures = []
    start = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = [pool.submit(run_case, ctx, fmt, args.seed, i, work_dir, args.case is not None)
                   for i in indices]
        for future in concurrent.futures.as_completed(futures):
            r = future.result()
            counts[r.category] += 1
            counts["located"] += r.located
            if r.category in FAILURES or args.case is not None:
                failures.append(r)
    elapsed = time.monotonic() - start
    for r in sorted(failures, key=lambda r: r.index):
        print(f"{name} case {r.index}: {r.category}: {r.detail}\n  reproduce: {sys.argv[0]} "
              f"--format {name} --case {r.index} --seed {args.seed} (input and output in "
              f"{os.path.join(work_dir, name, str(r.index))})", flush=True)
    return counts, elapsed


def print_table(rows):
    print(f"{'format':<11}{'cases':>7}" + "".join(f"{c:>10}" for c in CATEGORIES) + f"{'s':>8}")
    for name, counts, elapsed in rows:
        cases = sum(counts[c] for c in CATEGORIES if c != "located")
        print(f"{name:<11}{cases:>7}" + "".join(f"{counts[c]:>10}" for c in CATEGORIES) +
              f"{elapsed:>8.1f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--distir", required=True)
    parser.add_argument("--source-dir", required=True)
    parser.add_argument("--work-dir", required=True)
    parser.add_argument("--break-results", help="distir-break-results (a results seed "
                        "with /measured and /validation)")
    parser.add_argument("--format", action="append", choices=sorted(formats.FORMATS))
    parser.add_argument("--cases", type=int, default=1000,
                        help="cases per format (the environment's DISTIR_FUZZ_CASES wins)")
    parser.add_argument("--first", type=int, default=0,
                        help="index of the first case (CTest's plain build starts after the "
                        "cases the sanitizer build runs, so the two builds run different cases)")
    parser.add_argument("--seed", type=int, default=int(os.environ.get("DISTIR_FUZZ_SEED", "1")))
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds per command")
    parser.add_argument("--case", type=int, help="run this one case, and keep its directory")
    parser.add_argument("--sanitized", action="store_true", help="the build has ASan/UBSan")
    args = parser.parse_args()
    args.cases = int(os.environ.get("DISTIR_FUZZ_CASES", args.cases))
    if not args.sanitized:
        # Children inherit the limit: an input that makes distir allocate without
        # bound fails (bad_alloc: a crash) instead of taking the machine's memory.
        # ASan reserves terabytes of address space, so not under the sanitizers.
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))
    ctx = Context(args)
    work_dir = os.path.abspath(args.work_dir)
    os.makedirs(work_dir, exist_ok=True)
    rows = []
    for name in args.format or sorted(formats.FORMATS):
        counts, elapsed = run_format(ctx, name, args, work_dir)
        rows.append((name, counts, elapsed))
    print_table(rows)
    failed = sum(counts[c] for _, counts, _ in rows for c in FAILURES)
    if failed:
        print(f"FAILED: {failed} case(s) crashed, hung, gave a wrong result or left a file")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

"""What an exit 0 of distir must satisfy, whatever the input was (fuzz campaign).

Each check returns a list of problems, empty when the output agrees with itself:
times finite and not negative, throughput = batch / time, peak memory the
largest per-device peak and `fits` its comparison with the capacity, every
ranked configuration simulated, fitting and with a finite positive time, a
memory limit that is not negative, JSON without NaN, infinities or null.
"""

import json
import math
import os

# Busy and idle times are sums and differences of per-op times: allow rounding.
_REL_TOL = 1e-6


def _reject_constant(name):
    raise ValueError(f"JSON holds {name}")


def _strict_json(text):
    return json.loads(text, parse_constant=_reject_constant)


def _finite_nonneg(problems, where, value):
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        problems.append(f"{where} is {value!r}, not a number")
    elif not math.isfinite(value) or value < 0:
        problems.append(f"{where} = {value!r}, not finite and >= 0")


def _walk_numbers(node, path, problems):
    if node is None:
        problems.append(f"{path} is null")
    elif isinstance(node, dict):
        for k, v in node.items():
            _walk_numbers(v, f"{path}.{k}", problems)
    elif isinstance(node, list):
        for i, v in enumerate(node):
            _walk_numbers(v, f"{path}[{i}]", problems)
    elif isinstance(node, float) and not math.isfinite(node):
        problems.append(f"{path} = {node!r}")


def _check_devices(doc, problems):
    time = doc["iteration_time_s"]
    slack = _REL_TOL * max(time, 1e-30)
    peaks = []
    for device, d in doc.get("devices", {}).items():
        for key in ("busy_s", "compute_s", "communication_s"):
            if key in d:
                _finite_nonneg(problems, f"{device}.{key}", d[key])
        if d.get("idle_s", 0) < -slack:
            problems.append(f"{device}.idle_s = {d['idle_s']!r} is negative")
        if d.get("busy_s", 0) > time + slack:
            problems.append(f"{device}.busy_s {d['busy_s']} exceeds the iteration time {time}")
        _finite_nonneg(problems, f"{device}.peak_memory_bytes", d.get("peak_memory_bytes"))
        peaks.append(d.get("peak_memory_bytes", 0))
    if peaks and max(peaks) != doc["peak_memory_bytes"]:
        problems.append(f"peak_memory_bytes {doc['peak_memory_bytes']} is not the largest "
                        f"per-device peak {max(peaks)}")


def check_simulate_json(text):
    """`distir simulate --json`: one object whose numbers agree with each other."""
    try:
        doc = _strict_json(text)
    except ValueError as e:
        return [f"--json output does not parse: {e}"]
    problems = []
    _walk_numbers(doc, "json", problems)
    for key in ("iteration_time_s", "throughput", "peak_memory_bytes", "memory_capacity_bytes"):
        _finite_nonneg(problems, key, doc.get(key))
    if problems:
        return problems
    _check_devices(doc, problems)
    time, batch = doc["iteration_time_s"], doc.get("batch_size")
    if time > 0 and isinstance(batch, int) and batch > 0:
        expected = batch / time
        if not math.isclose(doc["throughput"], expected, rel_tol=_REL_TOL):
            problems.append(f"throughput {doc['throughput']} != batch / time = {expected}")
    fits = doc["peak_memory_bytes"] <= doc["memory_capacity_bytes"]
    if doc.get("fits_in_memory") != fits:
        problems.append(f"fits_in_memory is {doc.get('fits_in_memory')} with peak "
                        f"{doc['peak_memory_bytes']} and capacity {doc['memory_capacity_bytes']}")
    return problems


def check_trace(path):
    """A Chrome trace: strict JSON; every slice starts at a finite time >= 0 and lasts >= 0."""
    try:
        with open(path, encoding="utf-8") as fh:
            doc = _strict_json(fh.read())
    except (OSError, ValueError) as e:
        return [f"trace {os.path.basename(path)} does not parse: {e}"]
    problems = []
    for event in doc.get("traceEvents", []):
        if event.get("ph") != "X":
            continue
        for key in ("ts", "dur"):
            value = event.get(key)
            if not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                problems.append(f"trace slice {event.get('name')!r} has {key} = {value!r}")
                return problems
    return problems


def check_same_file(case_dir, a, b):
    """Two files are byte-identical (e.g. a program printed, then parsed and printed)."""
    with open(os.path.join(case_dir, a), "rb") as fa, open(os.path.join(case_dir, b), "rb") as fb:
        if fa.read() != fb.read():
            return [f"{b} (opt of {a}) differs from {a}: the printed program does not read back "
                    f"to itself"]
    return []


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


def _row_problems(i, row, limit):
    status = _text(row["status"])
    if status not in ("ok", "invalid", "error", "too-large"):
        return [f"row {i}: unknown status {status!r}"]
    if status != "ok":
        problems = [] if _text(row["reason"]) else [f"row {i}: status {status} without a reason"]
        if row["fits"] or row["rank"]:
            problems.append(f"row {i}: status {status} but fits={row['fits']} rank={row['rank']}")
        return problems
    time, tput, peak = row["iteration_time_s"], row["throughput"], row["peak_memory_bytes"]
    if not (math.isfinite(time) and time > 0 and math.isfinite(tput) and tput > 0):
        return [f"row {i}: status ok with time {time!r} and throughput {tput!r}"]
    problems = []
    if not math.isclose(tput, row["batch"] / time, rel_tol=_REL_TOL):
        problems.append(f"row {i}: throughput {tput} != batch / time {row['batch'] / time}")
    if peak < 0:
        problems.append(f"row {i}: peak memory {peak} < 0")
    if bool(row["fits"]) != (0 <= peak <= limit):
        problems.append(f"row {i}: fits={row['fits']} with peak {peak} and limit {limit}")
    return problems


def check_results_file(path):
    """A results file `distir search` wrote: the layout of docs/results_format.md with
    values that agree (ranked rows simulated, fitting, finite and positive)."""
    import h5py  # only the formats that read results need h5py

    try:
        f = h5py.File(path, "r")
    except OSError as e:
        return [f"results file does not open: {e}"]
    with f:
        limit = int(f.attrs["memory_limit_bytes"])
        problems = [] if limit >= 0 else [f"memory_limit_bytes = {limit} < 0"]
        columns = {name: col[()] for name, col in f["configs"].items()}
        lengths = {len(v) for v in columns.values()}
        if len(lengths) != 1:
            return problems + [f"/configs columns have different lengths {sorted(lengths)}"]
        ranking = list(f["ranking"][()])
    n = lengths.pop()
    for i in range(n):
        problems += _row_problems(i, {k: v[i] for k, v in columns.items()}, limit)
        if len(problems) > 5:
            return problems
    ranked = [i for i in range(n) if columns["rank"][i]]
    if sorted(ranking) != sorted(ranked) or len(set(ranking)) != len(ranking):
        problems.append(f"/ranking {ranking[:10]} is not the rows with a rank {ranked[:10]}")
    fitting = [i for i in range(n) if _text(columns["status"][i]) == "ok" and columns["fits"][i]]
    if sorted(fitting) != sorted(ranking):
        problems.append(f"/ranking {ranking[:10]} is not the rows that are ok and fit "
                        f"{fitting[:10]}")
    return problems


def check_report_csv(stdout, path):
    """`distir report --csv` of any file it accepted: every ranked row has a finite
    time, throughput and peak memory, none negative (the file, edited, may hold
    anything; the reader refuses a ranking that breaks this)."""
    problems = []
    lines = stdout.splitlines()
    if not lines or not lines[0].startswith("rank,index,"):
        return [f"--csv output has no header: {lines[:1]!r}"]
    header = lines[0].split(",")
    for line in lines[1:]:
        cells = dict(zip(header, line.split(",")))
        try:
            rank = int(cells["rank"])
            time, tput = float(cells["iteration_time_s"]), float(cells["throughput"])
            peak = float(cells["peak_memory_bytes"])
        except (KeyError, ValueError):
            continue  # a reason holding a comma; the row is not checked
        if rank > 0 and not (math.isfinite(time) and time >= 0 and math.isfinite(tput)
                             and tput >= 0 and peak >= 0):
            problems.append(f"ranked row (rank {rank}) with time {time}, throughput {tput}, "
                            f"peak {peak}")
            break
    return problems


def check_no_nonfinite(stdout):
    """Text output (report, validate) prints no NaN or infinity as a result."""
    for token in ("nan", "inf"):
        for word in stdout.replace(",", " ").split():
            if word.lower().lstrip("-+") == token:
                return [f"output prints {word!r}: {stdout.strip().splitlines()[:3]}"]
    return []

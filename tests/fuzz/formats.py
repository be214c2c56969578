"""The five input formats of the fuzz campaign (tests/fuzz/fuzz_campaign.py).

A format knows its seeds (valid inputs from the repository, or made by distir
itself), how to turn a seeded generator into one case (a mutated input written
into the case's directory and the distir command that reads it), and what an
exit 0 must satisfy (check_ok: a list of inconsistencies, empty when the
output agrees with itself). Every case is built from random.Random alone, so
the same (campaign seed, format, index) gives the same input and command.
"""

import glob
import os
import re
import shlex
import shutil
import subprocess

import consistency
import mutators


class Case:
    """One case: the argv (relative to its directory), the files the command may
    leave on success, and those it must leave unchanged on an error."""

    def __init__(self, argv, outputs=(), inputs=(), follow_ups=()):
        self.argv = argv
        self.outputs = list(outputs)
        self.inputs = list(inputs)
        self.follow_ups = list(follow_ups)  # (argv, name) run only after an exit 0


def _read(path):
    with open(path, "rb") as fh:
        return fh.read()


def _write(path, data):
    with open(path, "wb") as fh:
        fh.write(data)


class Format:
    name = ""
    # distir subcommands that start MPI: slower (a singleton launch) but mostly idle.
    uses_mpi = False

    def __init__(self, ctx):
        self.ctx = ctx

    def src(self, *parts):
        return os.path.join(self.ctx.source_dir, *parts)

    def prepare(self, work_dir):
        """Builds seeds that come from distir itself (results files)."""

    def make_case(self, rng, case_dir):
        raise NotImplementedError

    def check_ok(self, case, case_dir, stdout):
        return []


# ---- IR text --------------------------------------------------------------------------

_RUN_COMMAND = re.compile(r"distir (opt|simulate) %s(.*?)(?=\s*(?:\||&&|>|2>|$))")


def _own_commands(text, hardware):
    """The `distir opt|simulate %s FLAGS` lines of a lit seed, as argument lists."""
    commands = []
    for line in text.splitlines():
        if "RUN:" not in line:
            continue
        for m in _RUN_COMMAND.finditer(line):
            flags = m.group(2).replace("%distir_src/configs/hardware/dgx2-v100.yaml", hardware)
            try:
                args = shlex.split(flags)
            except ValueError:
                continue
            while "-o" in args:  # the case names its own output
                i = args.index("-o")
                del args[i:i + 2]
            if any("%" in a for a in args):
                continue  # another substitution (%t) we cannot give
            commands.append([m.group(1)] + args)
    return commands


class IrFormat(Format):
    name = "ir"

    def __init__(self, ctx):
        super().__init__(ctx)
        paths = sorted(glob.glob(self.src("data", "examples", "*.distir")) +
                       glob.glob(self.src("tests", "lit", "**", "*.distir"), recursive=True))
        self.hardware = self.src("configs", "hardware", "dgx2-v100.yaml")
        self.seeds = []
        for path in paths:
            text = _read(path)
            own = _own_commands(text.decode("utf-8", "replace"), self.hardware)
            self.seeds.append((path, text, own))

    def _command(self, rng, own):
        generic = [["opt"], ["opt", "--print-types"], ["opt", "--lower"],
                   ["opt", "--domain", "shape", "--print-types"],
                   ["simulate", "--hardware", self.hardware, "--json"]]
        if own and rng.random() < 0.5:
            return rng.choice(own)
        return rng.choice(generic)

    def make_case(self, rng, case_dir):
        path, text, own = rng.choice(self.seeds)
        _write(os.path.join(case_dir, "in.distir"), mutators.mutate_text(text, rng))
        command = self._command(rng, own)
        argv = [command[0], "in.distir"] + command[1:]
        if command[0] == "simulate":
            return Case(argv, inputs=["in.distir"])
        if any(a in command for a in ("--check-partition", "--lower")):
            return Case(argv, inputs=["in.distir"])
        # The printed program reads back to the same text (the printer is canonical).
        argv += ["-o", "out.distir"]
        printed = [a for a in command[1:] if a in ("--print-types", "--domain", "shape")]
        follow = [(["opt", "out.distir", "-o", "again.distir"] + printed, "reprint")]
        return Case(argv, outputs=["out.distir", "again.distir"], inputs=["in.distir"],
                    follow_ups=follow)

    def check_ok(self, case, case_dir, stdout):
        if case.argv[0] == "simulate":
            return consistency.check_simulate_json(stdout)
        if "-o" not in case.argv:
            return []
        return consistency.check_same_file(case_dir, "out.distir", "again.distir")


# ---- hardware profiles ----------------------------------------------------------------


class HardwareFormat(Format):
    name = "hardware"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.seeds = [_read(p) for p in sorted(glob.glob(self.src("configs", "hardware",
                                                                  "*.yaml")))]
        self.programs = [self.src("data", "examples", p) for p in
                         ("mlp_dp.distir", "mlp_pp.distir", "mlp_dp_overlap.distir")]

    def make_case(self, rng, case_dir):
        _write(os.path.join(case_dir, "hw.yaml"), mutators.mutate_yaml(rng.choice(self.seeds),
                                                                         rng))
        if rng.random() < 0.5:
            argv = ["simulate", rng.choice(self.programs)]
        else:
            argv = ["simulate", "--model", rng.choice(["mlp-tiny", "gpt2-tiny"]), "--batch", "8",
                    "--dp", "2", "--tp", rng.choice(["1", "2"]), "--pp", rng.choice(["1", "2"]),
                    "--microbatches", "2", "--max-memory", "1GiB"]
        argv += ["--hardware", "hw.yaml", "--json", "-o", "out.json"]
        outputs = ["out.json"]
        if rng.random() < 0.3:
            argv += ["--trace", "trace.json"]
            outputs.append("trace.json")
        return Case(argv, outputs=outputs, inputs=["hw.yaml"])

    def check_ok(self, case, case_dir, stdout):
        with open(os.path.join(case_dir, "out.json"), encoding="utf-8", errors="replace") as fh:
            problems = consistency.check_simulate_json(fh.read())
        if "trace.json" in case.outputs:
            problems += consistency.check_trace(os.path.join(case_dir, "trace.json"))
        return problems


# ---- experiments ----------------------------------------------------------------------

EXPERIMENT_SEEDS = [
    "configs/experiments/example.yaml",
    "tests/lit/search/Inputs/tiny_search.yaml",
    "tests/lit/search/huge_knobs.yaml",
    "tests/lit/search/issue_20_too_large.yaml",
    "tests/lit/search/mesh_shapes.yaml",
    "tests/lit/search/report_mixed_batches.yaml",
    "tests/lit/search/report_schedules.yaml",
    "tests/lit/search/memory_limit_too_large.yaml",
    "tests/lit/search/model_size_overflow.yaml",
    "tests/lit/search/sharding_model_rules_missing.yaml",
    "tests/fuzz/seeds/gpt2_tiny.yaml",
    "tests/fuzz/seeds/mlp_sharding.yaml",
    "tests/fuzz/seeds/onnx_mlp.yaml",
]

_RELATIVE_PATH = re.compile(rb"(?<![\w/.])((?:\.\./|\./)*[\w.-]+(?:/[\w.-]+)*\.(?:yaml|onnx))")


def _absolute_paths(text, seed_dir):
    """Paths in a seed relative to its own directory, made absolute, so the case can
    live anywhere; `hw.yaml` (tiny_search.yaml) names the default profile."""

    def repl(m):
        rel = m.group(1).decode()
        if rel == "hw.yaml":
            rel = "../../../../configs/hardware/dgx2-v100.yaml"
        path = os.path.normpath(os.path.join(seed_dir, rel))
        return path.encode() if os.path.exists(path) else m.group(1)

    return _RELATIVE_PATH.sub(repl, text)


class ExperimentFormat(Format):
    name = "experiment"
    uses_mpi = True

    def __init__(self, ctx):
        super().__init__(ctx)
        self.seeds = []
        for rel in EXPERIMENT_SEEDS:
            path = self.src(rel)
            self.seeds.append(_absolute_paths(_read(path), os.path.dirname(path)))

    def make_case(self, rng, case_dir):
        _write(os.path.join(case_dir, "exp.yaml"), mutators.mutate_yaml(rng.choice(self.seeds),
                                                                          rng))
        argv = ["search", "exp.yaml", "-o", "out.h5", "--quiet", "--max-memory", "1GiB"]
        follow = [(["report", "out.h5", "--csv"], "report")]
        return Case(argv, outputs=["out.h5"], inputs=["exp.yaml"], follow_ups=follow)

    def check_ok(self, case, case_dir, stdout):
        return consistency.check_results_file(os.path.join(case_dir, "out.h5"))


# ---- ONNX -----------------------------------------------------------------------------

ONNX_SEEDS = [
    ("mlp.onnx", ["--input", "x=4x16"]),
    ("mlp.onnx", []),
    ("gpt2-tiny-op14.onnx", []),
    ("gpt2-tiny-op17.onnx", ["--dtype", "f16"]),
    ("gpt2-tiny-op14-dyn.onnx", ["--input", "input_ids=2x8"]),
    ("gpt2-tiny-op17-dyn.onnx", ["--input", "input_ids=1x4"]),
    ("opset11.onnx", []),
    ("unsupported-op.onnx", []),
]


class OnnxFormat(Format):
    name = "onnx"

    def __init__(self, ctx):
        super().__init__(ctx)
        self.seeds = [(_read(self.src("data", "onnx", name)), flags)
                      for name, flags in ONNX_SEEDS]

    def make_case(self, rng, case_dir):
        data, flags = rng.choice(self.seeds)
        _write(os.path.join(case_dir, "in.onnx"), mutators.mutate_protobuf(data, rng))
        argv = ["import", "in.onnx"] + flags + ["-o", "out.distir"]
        if rng.random() < 0.3:
            argv.append("--print-types")
        if rng.random() < 0.2:
            argv += ["--device", "none"]
        # The imported function parses, verifies and types again.
        follow = [(["opt", "out.distir", "--print-types", "-o", "typed.distir"], "reparse")]
        return Case(argv, outputs=["out.distir", "typed.distir"], inputs=["in.onnx"],
                    follow_ups=follow)


# ---- results files --------------------------------------------------------------------


class ResultsFormat(Format):
    name = "results"

    def prepare(self, work_dir):
        """Two seeds: a search's file (traces, several batches, configurations that do
        not fit) and distir-break-results' (with /measured and /validation)."""
        import h5_mutators  # h5py only where the format runs
        self.h5_mutators = h5_mutators
        seed_dir = os.path.join(work_dir, "seeds")
        os.makedirs(seed_dir, exist_ok=True)
        search_seed = os.path.join(seed_dir, "search.h5")
        exp = self.src("tests", "lit", "search", "report_mixed_batches.yaml")
        if not os.path.exists(search_seed):
            subprocess.run([self.ctx.distir, "search", exp, "-o", search_seed, "--quiet"],
                           check=True, stdout=subprocess.DEVNULL, env=self.ctx.env)
        self.seeds = [search_seed]
        if self.ctx.break_results:
            broken_seed = os.path.join(seed_dir, "measured.h5")
            subprocess.run([self.ctx.break_results, "none", broken_seed], check=True,
                           env=self.ctx.env)
            self.seeds.append(broken_seed)

    def make_case(self, rng, case_dir):
        path = os.path.join(case_dir, "r.h5")
        shutil.copyfile(rng.choice(self.seeds), path)
        self.h5_mutators.mutate_results_file(path, rng)
        command = rng.choice([
            ["report", "r.h5"], ["report", "r.h5", "--csv"], ["report", "r.h5", "--top", "2"],
            ["report", "r.h5", "--batch", "64", "--where", "dp=2"], ["validate", "r.h5"],
            ["validate", "r.h5"],
        ])
        # validate adds /validation to the file: on an error it must stay as it was.
        return Case(command, inputs=["r.h5"])

    def check_ok(self, case, case_dir, stdout):
        if case.argv[0] == "report" and "--csv" in case.argv:
            return consistency.check_report_csv(stdout, os.path.join(case_dir, "r.h5"))
        return consistency.check_no_nonfinite(stdout)


FORMATS = {f.name: f for f in (IrFormat, ExperimentFormat, HardwareFormat, OnnxFormat,
                               ResultsFormat)}

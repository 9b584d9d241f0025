#!/usr/bin/env python3
"""Strong and weak scaling of `warpmc potts run` cut into strips across MPI
processes on this machine's CPU.

Every row is one lattice run under `mpirun -np N ... --decompose strips`,
each process with one thread. Strong scaling keeps the lattice (L × L) and
adds processes; weak scaling keeps each process's strip (L × L) and grows
the lattice with the processes (one process runs the same lattice in
both, measured apart). Two measures per row:

- flips/ns: wall-clock site updates per nanosecond as warpmc times them
  (the sweeps and the census, every process waiting for the slowest);
  what the job gets, which on a machine shared with other work depends on
  the cores the others leave it;
- CPU ns/flip: processor time of all the job's processes per site update,
  from the difference between a long run and a one-sweep run of the same
  job (so that starting MPI and the processes, and building the lattice,
  cancel); it grows with every cost of splitting the lattice (messages,
  waiting in MPI, which polls, and sharing the memory bandwidth) and is
  much less sensitive to other work on the machine.

Each ratio is taken to the one-process row of the same table, measured in
the same run; the configurations are run in turn, REPEAT times over, and
the median is reported (with the range of flips/ns). A last row runs one
process without MPI on every core, the yardstick of what the whole machine
does without strips.

Needs a build with the mpi feature (cargo build --release --features mpi)
and Open MPI's mpirun.

    python3 scripts/mpi-scaling.py [--warpmc target/release/warpmc] [--ranks 1,2] [--repeat 5]
"""

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys


def run(warpmc, ranks, threads, args):
    """(flips/ns, CPU seconds of the job) of one run; ranks None runs
    without mpirun."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if threads is not None:
        env["RAYON_NUM_THREADS"] = str(threads)
    cmd = [warpmc, "potts", "run", "--backend", "cpu", "--json"] + args
    if ranks is not None:
        cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), "-x", "RAYON_NUM_THREADS"] + cmd
        cmd += ["--decompose", "strips"]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return json.loads(out.stdout.splitlines()[-1])["flips_per_ns"], cpu


def protocol(q, width, height, sweeps, field):
    tc = 1 / math.log(1 + math.sqrt(q))
    args = ["--q", str(q), "--size", str(width), "--height", str(height), "--temp", f"{tc:.6f}"]
    args += ["--init", "random", "--therm", "0", "--sweeps", str(sweeps), "--measure-every", str(sweeps)]
    if field:
        args += ["--field", str(field)]
    return args


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--warpmc", default="target/release/warpmc")
    p.add_argument("--ranks", default="1,2", help="process counts, the first the reference")
    p.add_argument("--size", type=int, default=2048, help="L: strong scaling runs L x L")
    p.add_argument("--repeat", type=int, default=5)
    a = p.parse_args()
    ranks = [int(r) for r in a.ranks.split(",")]
    cores = os.cpu_count()
    L = a.size
    # (rule, q, field, sweeps): the bit-sliced rule and the one-word-per-site
    # rule (a field keeps q = 3 off the bit-sliced rule).
    rules = [("bit-sliced", 9, None, 200), ("site words", 3, 0.1, 40)]
    configs = []
    for rule, q, field, sweeps in rules:
        for kind in ["strong", "weak"]:
            for n in ranks:
                h = L if kind == "strong" else L * n
                configs.append((rule, kind, n, 1, q, field, sweeps, h))
        configs.append((rule, "no MPI", None, None, q, field, sweeps, L))
    rates = {i: [] for i in range(len(configs))}
    cpu_per_flip = {i: [] for i in range(len(configs))}
    for _ in range(a.repeat):
        for i, (_, _, n, threads, q, field, sweeps, h) in enumerate(configs):
            rate, cpu_long = run(a.warpmc, n, threads, protocol(q, L, h, sweeps, field))
            _, cpu_short = run(a.warpmc, n, threads, protocol(q, L, h, 1, field))
            rates[i].append(rate)
            cpu_per_flip[i].append((cpu_long - cpu_short) * 1e9 / ((sweeps - 1) * L * h))
    print(f"# {cores} cores; median of {a.repeat} runs each; one thread per process under mpirun")
    print("| rule | scaling | lattice | processes | flips/ns | vs 1 process | CPU ns/flip | CPU efficiency |")
    print("|---|---|---|---|---|---|---|---|")
    for i, (rule, kind, n, threads, q, field, sweeps, h) in enumerate(configs):
        rate = statistics.median(rates[i])
        cost = statistics.median(cpu_per_flip[i])
        lattice = f"{L} × {h}"
        spread = f"{min(rates[i]):.3f}–{max(rates[i]):.3f}"
        if n is None:
            print(f"| {rule} | one process, {cores} threads, no MPI | {lattice} | 1 | {rate:.3f} ({spread}) | – "
                  f"| {cost:.2f} | – |")
            continue
        ref = next(j for j, c in enumerate(configs) if c[0] == rule and c[1] == kind and c[2] == ranks[0])
        ratio = rate / statistics.median(rates[ref])
        efficiency = statistics.median(cpu_per_flip[ref]) / cost
        print(f"| {rule} | {kind} | {lattice} | {n} | {rate:.3f} ({spread}) | {ratio:.2f}× | {cost:.2f} "
              f"| {100 * efficiency:.0f} % |")


if __name__ == "__main__":
    main()

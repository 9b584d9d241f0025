#!/usr/bin/env python3
"""Strong and weak scaling of `warpmc potts run` cut into strips across MPI
processes on this machine's CPU.

Every row is one lattice run under `mpirun -np N ... --decompose strips`,
each process with one thread, timed by warpmc itself (the `flips_per_ns` of
its JSON line: the sweeps and the census, every process waiting for the
slowest). Strong scaling keeps the lattice (L × L) and adds processes; weak
scaling keeps each process's strip (L × L/2) and grows the lattice with the
processes. Each ratio is taken to the one-process row of the same table,
measured in the same run; the configurations are run in turn, REPEAT times
over, and the median is reported, so that a machine shared with other work
spreads its noise over all rows alike. A last row runs one process without
MPI on every core, the yardstick of what the whole machine does without
strips.

Needs a build with the mpi feature (cargo build --release --features mpi)
and Open MPI's mpirun.

    python3 scripts/mpi-scaling.py [--warpmc target/release/warpmc] [--ranks 1,2] [--repeat 5]
"""

import argparse
import json
import math
import os
import statistics
import subprocess
import sys


def run(warpmc, ranks, threads, args):
    """flips/ns of one run; ranks None runs without mpirun."""
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if threads is not None:
        env["RAYON_NUM_THREADS"] = str(threads)
    cmd = [warpmc, "potts", "run", "--backend", "cpu", "--json"] + args
    if ranks is not None:
        cmd = ["mpirun", "--oversubscribe", "-np", str(ranks), "-x", "RAYON_NUM_THREADS"] + cmd
        cmd += ["--decompose", "strips"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{out.stderr}")
    return json.loads(out.stdout.splitlines()[-1])["flips_per_ns"]


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
        for n in ranks:
            configs.append((rule, "strong", n, 1, protocol(q, L, L, sweeps, field), f"{L} × {L}"))
        for n in ranks:
            h = L // 2 * n
            configs.append((rule, "weak", n, 1, protocol(q, L, h, sweeps, field), f"{L} × {h}"))
        configs.append((rule, "no MPI", None, None, protocol(q, L, L, sweeps, field), f"{L} × {L}"))
    rates = {i: [] for i in range(len(configs))}
    for _ in range(a.repeat):
        for i, (_, _, n, threads, args, _) in enumerate(configs):
            rates[i].append(run(a.warpmc, n, threads, args))
    print(f"# {cores} cores; median of {a.repeat} runs each; one thread per process under mpirun")
    print("| rule | scaling | lattice | processes | flips/ns | vs 1 process | efficiency |")
    print("|---|---|---|---|---|---|---|")
    for i, (rule, kind, n, threads, _, lattice) in enumerate(configs):
        rate = statistics.median(rates[i])
        if n is None:
            print(f"| {rule} | one process, {cores} threads, no MPI | {lattice} | 1 | {rate:.3f} | – | – |")
            continue
        ref = next(j for j, c in enumerate(configs) if c[0] == rule and c[1] == kind and c[2] == ranks[0])
        ratio = rate / statistics.median(rates[ref])
        efficiency = ratio * ranks[0] / n
        spread = f"{min(rates[i]):.3f}–{max(rates[i]):.3f}"
        print(f"| {rule} | {kind} | {lattice} | {n} | {rate:.3f} ({spread}) | {ratio:.2f}× | {100 * efficiency:.0f} % |")


if __name__ == "__main__":
    main()

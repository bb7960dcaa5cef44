#!/usr/bin/env python3
"""Summarize benchmark/sweep.sh output: per build and scene, the best and median
rate; 2-thread scaling (best 2T over best 1T, and the median of per-round
ratios); the flock step's pair rate over the kernel's (best over best, and
per round). Usage: benchmark/summary.py runs.jsonl"""
import collections
import json
import statistics
import sys

runs = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
flock = collections.defaultdict(list)   # (build, dim, threads) -> runs
kernel = collections.defaultdict(list)  # (build, dim) -> pair rates
rounds = collections.defaultdict(dict)  # round -> key -> run
for r in runs:
    if "kernel" in r:
        kernel[(r["build"], r["kernel"])].append(r["pairs"])
        rounds[r["round"]][("kernel", r["build"], r["kernel"])] = r
    else:
        flock[(r["build"], r["dim"], r["threads"])].append(r)
        rounds[r["round"]][(r["build"], r["dim"], r["threads"])] = r

print("%d rounds" % len(rounds))
for (b, dim, t), v in sorted(flock.items()):
    rates = [x["rate"] / 1e6 for x in v]
    hashes = sorted(set(x["hash"] for x in v))
    print("build %d  %dD  %d thread(s): best %6.2f M  median %6.2f M  (%d runs, hash %s)"
          % (b, dim, t, max(rates), statistics.median(rates), len(v), ",".join(hashes)))
for (b, dim), v in sorted(kernel.items()):
    print("build %d  kernel %dD: best %.2f G  median %.2f G" % (b, dim, max(v) / 1e9, statistics.median(v) / 1e9))
for b in sorted(set(k[0] for k in flock)):
    for dim in (2, 3):
        one, two = flock.get((b, dim, 1)), flock.get((b, dim, 2))
        if not one or not two:
            continue
        per_round = [v[(b, dim, 2)]["rate"] / v[(b, dim, 1)]["rate"]
                     for v in rounds.values() if (b, dim, 1) in v and (b, dim, 2) in v]
        print("build %d  %dD scaling: best/best %.2fx  per-round median %.2fx"
              % (b, dim, max(x["rate"] for x in two) / max(x["rate"] for x in one),
                 statistics.median(per_round)))
        if (b, dim) in kernel:
            per_round = [v[(b, dim, 1)]["pairs"] / v[("kernel", b, dim)]["pairs"]
                         for v in rounds.values() if (b, dim, 1) in v and ("kernel", b, dim) in v]
            print("build %d  %dD pair rate / kernel, 1 thread: best/best %.1f%%  best/median %.1f%%  per-round median %.1f%%"
                  % (b, dim, 100 * max(x["pairs"] for x in one) / max(kernel[(b, dim)]),
                     100 * max(x["pairs"] for x in one) / statistics.median(kernel[(b, dim)]),
                     100 * statistics.median(per_round)))

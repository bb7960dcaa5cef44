#!/usr/bin/env python3
"""The serial share of a world's step, per system, from a callgrind profile.

    valgrind --tool=callgrind --toggle-collect=shoal_world_step \\
        --callgrind-out-file=OUT shoal bench flock --threads 1 ...
    python3 benchmark/serial_share.py OUT [--steps N] [--base OUT0 --base-steps N0]
                                  [--top K] [--json]

On one thread every parallel loop still runs through par_for -> par_run ->
its body, so the instructions a step spends under par_run are the ones the
workers share, and every other instruction of the step runs on one thread
(the caller) whatever the thread count. For each system (a callee of
world_run_system) this prints its instructions, the part outside par_run,
that part's share, and Amdahl's bound on the speed-up at 16 threads from the
step's serial share alone (a bound: it leaves out the loops' start and end,
imbalance and memory bandwidth, which only a many-core machine shows).

With --base, a profile of the same run with fewer steps, the figures are
the difference of the two: the steps in between, without the first steps'
one-time work (allocations, the first checks of uniform columns). --top K
lists the K functions whose own instructions are the most serial ones.

A callee called from several places is split in proportion: the serial part
of one call is its inclusive cost times the callee's serial share overall.
"""
import argparse
import json
import re
import sys
from collections import defaultdict

PARALLEL = {"par_run"}  # whose whole subtree the workers share


def parse(path):
    names = {}
    self_cost = defaultdict(int)
    edges = defaultdict(lambda: defaultdict(int))
    fn = None
    cfn = None
    pending_call = False

    def name_of(spec):
        m = re.match(r"\((\d+)\)(?:\s+(.*))?$", spec.strip())
        if not m:
            return spec.strip()
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "?" + m.group(1))

    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line:
                continue
            if line.startswith("fn="):
                fn = name_of(line[3:])
                continue
            if line.startswith("cfn="):
                cfn = name_of(line[4:])
                continue
            if line.startswith("calls="):
                pending_call = True
                continue
            c = line[0]
            if c.isdigit() or c in "+-*":
                parts = line.split()
                if len(parts) < 2 or fn is None:
                    pending_call = False
                    continue
                cost = int(parts[-1])
                if pending_call:
                    edges[fn][cfn] += cost
                    pending_call = False
                else:
                    self_cost[fn] += cost
    return self_cost, edges


def analyse(self_cost, edges):
    incl = {}

    def inclusive(f):
        if f not in incl:
            incl[f] = self_cost.get(f, 0) + sum(edges.get(f, {}).values())
        return incl[f]

    memo = {}
    visiting = set()

    def serial(f):
        if f in PARALLEL:
            return 0
        if f in memo:
            return memo[f]
        if f in visiting:  # recursion: count its own work only
            return self_cost.get(f, 0)
        visiting.add(f)
        s = self_cost.get(f, 0)
        for c, cost in edges.get(f, {}).items():
            if c in PARALLEL:
                continue
            ic = inclusive(c)
            s += cost * (serial(c) / ic) if ic else 0
        visiting.discard(f)
        memo[f] = s
        return s

    return inclusive, serial


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("profile")
    ap.add_argument("--steps", type=int, default=1, help="steps in the profile (figures per step)")
    ap.add_argument("--threads", type=int, default=16, help="thread count for the Amdahl bound")
    ap.add_argument("--base", help="a profile of the same run with fewer steps, subtracted")
    ap.add_argument("--base-steps", type=int, default=0)
    ap.add_argument("--top", type=int, default=0, help="list the K most serial functions")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args()
    self_cost, edges = parse(a.profile)
    if a.base:
        b_self, b_edges = parse(a.base)
        for f, v in b_self.items():
            self_cost[f] -= v
        for f, out in b_edges.items():
            for c, v in out.items():
                edges[f][c] -= v
        a.steps -= a.base_steps
        if a.steps <= 0:
            sys.exit("serial_share: --steps must exceed --base-steps")
    inclusive, serial = analyse(self_cost, edges)
    step = "shoal_world_step"
    if inclusive(step) == 0:
        sys.exit("serial_share: no shoal_world_step in the profile (collect with --toggle-collect=shoal_world_step)")
    total, total_serial = inclusive(step), serial(step)
    rows = []
    for sysf, cost in sorted(edges.get("world_run_system", {}).items(), key=lambda kv: -kv[1]):
        ic = inclusive(sysf)
        sc = cost * (serial(sysf) / ic) if ic else 0
        rows.append({"system": sysf, "ir_per_step": cost / a.steps, "serial_ir_per_step": sc / a.steps,
                     "serial_share": sc / cost if cost else 0.0, "share_of_step": cost / total})
    s = total_serial / total
    bound = 1.0 / (s + (1.0 - s) / a.threads)
    out = {"ir_per_step": total / a.steps, "serial_ir_per_step": total_serial / a.steps, "serial_share": s,
           "amdahl_bound": bound, "threads": a.threads, "systems": rows}
    # each function's own serial instructions: its self cost times the
    # share of its calls that come down from the step outside par_run
    callers = defaultdict(dict)
    for f, out_edges in edges.items():
        for c, cost in out_edges.items():
            callers[c][f] = cost
    flow_memo = {step: float(total)}
    flowing = set()

    def flow(f):
        if f in flow_memo:
            return flow_memo[f]
        if f in flowing:  # recursion: its outer calls carry it
            return 0.0
        flowing.add(f)
        v = 0.0
        for caller, cost in callers.get(f, {}).items():
            if caller in PARALLEL:
                continue
            ic = inclusive(caller)
            v += cost * (flow(caller) / ic) if ic else 0.0
        flowing.discard(f)
        flow_memo[f] = v
        return v

    own = []
    for f in list(self_cost):
        ic = inclusive(f)
        if ic > 0 and self_cost[f] > 0:
            v = self_cost[f] * flow(f) / ic
            if v > 0:
                own.append((v, f))
    own.sort(reverse=True)
    out["top"] = [{"function": f, "serial_self_ir_per_step": v / a.steps} for v, f in own[: a.top]]
    if a.json:
        print(json.dumps(out))
        return
    print(f"step: {total / a.steps:,.0f} instructions a step, {total_serial / a.steps:,.0f} serial "
          f"({100 * s:.2f} %); Amdahl's bound at {a.threads} threads: {bound:.1f}x")
    print(f"{'system':<20} {'Ir/step':>14} {'of step':>8} {'serial Ir/step':>15} {'serial':>8}")
    for r in rows:
        if r["share_of_step"] < 0.001:
            continue
        print(f"{r['system']:<20} {r['ir_per_step']:>14,.0f} {100 * r['share_of_step']:>7.2f}% "
              f"{r['serial_ir_per_step']:>15,.0f} {100 * r['serial_share']:>7.2f}%")
    if out["top"]:
        print("the most serial functions (their own instructions outside par_run, a step):")
        for t in out["top"]:
            print(f"  {t['function']:<40} {t['serial_self_ir_per_step']:>14,.0f}")


if __name__ == "__main__":
    main()

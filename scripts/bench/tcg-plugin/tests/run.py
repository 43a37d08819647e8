#!/usr/bin/env python3
"""Run the tcg-bench plugin's user-mode tests under qemu-x86_64.

    run.py PLUGIN BINDIR OUTDIR

BINDIR holds the static test programs icount and sharing (tests/*.c). Each
test runs ROUNDS times; prints "ok"/"not ok" per test and "N passed, N
failed" at the end; exits non-zero on a failure.
"""
import json
import os
import subprocess
import sys
import time

ROUNDS = 3
ICOUNT_ITERS = 1_000_000
INSNS_PER_ITER = 8
SHARE_N = 20_000
SHARE_N4 = 5_000

plugin, bindir, outdir = sys.argv[1:4]
results = []
timings = {}


def nm(binary):
    syms = {}
    for line in subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout.splitlines():
        f = line.split()
        if len(f) == 3:
            syms[f[2]] = int(f[0], 16)
    return syms


def run(name, args, plugin_args):
    """One run: the list of regions (JSON) of the plugin's report."""
    json_path = os.path.join(outdir, name + ".json")
    txt_path = os.path.join(outdir, name + ".txt")
    pa = ",".join([plugin, "json=" + json_path, "out=" + txt_path] + plugin_args)
    t = time.monotonic()
    p = subprocess.run(["qemu-x86_64", "-plugin", pa] + args, capture_output=True, text=True, timeout=600)
    timings.setdefault(name.rsplit("-r", 1)[0], []).append(time.monotonic() - t)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(args)}: exit {p.returncode}: {p.stderr.strip()}")
    with open(json_path) as f:
        return [json.loads(l) for l in f if l.strip()]


def test(name, fn):
    try:
        msg = fn()
        results.append(True)
        print(f"ok - {name}: {msg}")
    except Exception as e:  # noqa: BLE001 - a test failure of any kind
        results.append(False)
        print(f"not ok - {name}: {e}")
    sys.stdout.flush()


def within(value, expected, tol):
    return abs(value - expected) <= tol * expected


def agree(values, tol):
    return (max(values) - min(values)) <= tol * min(values)


def icount_test(count, threads, mode="icount"):
    def fn():
        exp = INSNS_PER_ITER * ICOUNT_ITERS
        per_round = []
        for r in range(ROUNDS):
            reg = run(f"icount-{count}-{mode}-t{threads}-r{r}",
                      [os.path.join(bindir, "icount"), str(ICOUNT_ITERS), str(threads)],
                      [f"count={count}", f"mode={mode}"])
            if len(reg) != 1:
                raise RuntimeError(f"{len(reg)} regions")
            reg = reg[0]
            if reg["kernel"] != 0:
                raise RuntimeError(f"kernel instructions {reg['kernel']} in user mode")
            workers = [v for v in reg["vcpus"] if v["ops"] == ICOUNT_ITERS]
            if len(workers) != threads:
                raise RuntimeError(f"{len(workers)} vCPUs with {ICOUNT_ITERS} ops, expected {threads}")
            for v in workers:
                if not within(v["user"], exp, 0.005):
                    raise RuntimeError(f"vCPU {v['vcpu']}: {v['user']} instructions, expected {exp} +-0.5%")
            per_round.append(sum(v["user"] for v in workers))
        if not agree(per_round, 0.005):
            raise RuntimeError(f"rounds disagree: {per_round}")
        dev = max(abs(x - exp * threads) for x in per_round) / (exp * threads)
        return (f"{threads} x {ICOUNT_ITERS} iterations x {INSNS_PER_ITER}: counted {per_round} "
                f"(max deviation {dev:.5%}, rounds spread {max(per_round) - min(per_round)})")
    return fn


def rep_test(n, length):
    """rep movsb: its iterations apart from the instructions."""
    def fn():
        reps, insns = [], []
        for r in range(ROUNDS):
            reg = run(f"icount-rep-{length}-r{r}", [os.path.join(bindir, "icount"), "rep", str(n), str(length)], [])
            if len(reg) != 1:
                raise RuntimeError(f"{len(reg)} regions")
            reg = reg[0]
            if reg["ops"] != n:
                raise RuntimeError(f"ops {reg['ops']}, expected {n}")
            if not within(reg["user"], 6 * n, 0.005):
                raise RuntimeError(f"{reg['user']} instructions, expected {6 * n} +-0.5% (rep counted once)")
            if not (length - 1) * n <= reg["rep"] <= length * n + 10:
                raise RuntimeError(f"{reg['rep']} rep iterations, expected {length - 1}..{length} per op")
            reps.append(reg["rep"])
            insns.append(reg["user"])
        return f"{n} x rep movsb of {length}: instructions {insns} (expected {6 * n}), rep iterations {reps}"
    return fn


def profile_test():
    """profile=N: instructions by function, named from the program's nm."""
    def fn():
        binary = os.path.join(bindir, "icount")
        smap = os.path.join(outdir, "icount.map")
        with open(smap, "w") as f:
            f.write(subprocess.run(["nm", binary], capture_output=True, text=True, check=True).stdout)
        reg = run("icount-profile", [binary, str(ICOUNT_ITERS)], ["profile=5", "symbols=" + smap])
        prof = reg[0].get("profile", [])
        if not prof or prof[0][0] != "loop" or not within(prof[0][1], INSNS_PER_ITER * ICOUNT_ITERS, 0.001):
            raise RuntimeError(f"profile {prof[:3]}, expected loop first with {INSNS_PER_ITER * ICOUNT_ITERS}")
        # Blocks count whole: the start and stop markers' blocks may add
        # the instructions before/after the markers (a few).
        total, insns = sum(n for _, n in prof), reg[0]["user"] + reg[0]["kernel"]
        if abs(total - insns) > 32:
            raise RuntimeError(f"profile sums to {total}, the region has {insns}")
        return f"profile {prof[:3]}"
    return fn


def reset_test():
    def fn():
        reg = run("icount-reset", [os.path.join(bindir, "icount"), "reset"], [])
        got = [(g["complete"], g["ops"]) for g in reg]
        if got != [(False, 500), (True, 1000)]:
            raise RuntimeError(f"regions (complete, ops) {got}, expected [(False, 500), (True, 1000)]")
        if not within(reg[1]["user"], 8000, 0.01):
            raise RuntimeError(f"second region: {reg[1]['user']} instructions, expected 8000")
        return f"regions (complete, ops) {got}, the second {reg[1]['user']} instructions"
    return fn


def sharing_test(mode, threads, n, watch_syms, expect):
    """expect: transfers of each watched line ("shared") or of all of them
    together ("zero"), against threads*n within 5%."""
    def fn():
        binary = os.path.join(bindir, "sharing")
        syms = nm(binary)
        watch = [syms[s] + off for s, off in watch_syms]
        target = threads * n
        counts = []
        for r in range(ROUNDS):
            reg = run(f"sharing-{mode}-t{threads}-r{r}", [binary, mode, str(n), str(threads)],
                      ["mode=c2c", "top=5", "symbols=" + os.path.join(outdir, "sharing.map"),
                       "watch=" + ":".join(hex(a) for a in watch)])
            if len(reg) != 1:
                raise RuntimeError(f"{len(reg)} regions")
            reg = reg[0]
            if reg["ops"] != target:
                raise RuntimeError(f"ops {reg['ops']}, expected {target}")
            got = {int(w["addr"], 16): w["transfers"] for w in reg["watch"]}
            if expect == "shared":
                t = got[watch[0]]
                if not within(t, target, 0.05):
                    raise RuntimeError(f"round {r}: {t} transfers of the shared line, expected {target} +-5%")
                top = next((l for l in reg["top"] if int(l["addr"], 16) == watch[0] & ~63), None)
                if top is None or not top["pcs"][0]["sym"].startswith("increment+"):
                    raise RuntimeError(f"round {r}: the shared line is not symbolized to increment(): {top}")
            else:
                t = sum(got.values())
                if t > 0.05 * target:
                    raise RuntimeError(f"round {r}: {t} transfers of the private lines, expected ~0 (<5% of {target})")
            counts.append(t)
        what = "shared line" if expect == "shared" else "private lines"
        return f"{threads} threads x {n}: {what} transfers {counts}, expected {target if expect == 'shared' else 0}"
    return fn


def main():
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "sharing.map"), "w") as f:
        f.write(subprocess.run(["nm", os.path.join(bindir, "sharing")], capture_output=True, text=True,
                               check=True).stdout)
    test("icount count=tb, 1 thread", icount_test("tb", 1))
    test("icount count=insn, 1 thread", icount_test("insn", 1))
    test("icount count=tb, 4 threads", icount_test("tb", 4))
    test("icount count=insn, 4 threads", icount_test("insn", 4))
    test("icount in c2c mode, 2 threads", icount_test("tb", 2, "c2c"))
    test("rep movsb counted apart, 256 bytes", rep_test(10_000, 256))
    test("rep movsb counted apart, 1 byte", rep_test(10_000, 1))
    test("reset marker closes a region left open", reset_test())
    test("profile: instructions by function", profile_test())
    test("c2c one counter, 2 threads lock-step", sharing_test("counter", 2, SHARE_N, [("shared_counter", 0)], "shared"))
    test("c2c false sharing, 2 threads lock-step", sharing_test("false", 2, SHARE_N, [("false_line", 0)], "shared"))
    test("c2c separate lines, 2 threads lock-step",
         sharing_test("separate", 2, SHARE_N, [("separate_lines", 0), ("separate_lines", 64)], "zero"))
    test("c2c separate lines, 2 threads free-running",
         sharing_test("free", 2, SHARE_N, [("separate_lines", 0), ("separate_lines", 64)], "zero"))
    test("c2c one counter, 4 threads lock-step", sharing_test("counter", 4, SHARE_N4, [("shared_counter", 0)], "shared"))
    test("c2c false sharing, 4 threads lock-step", sharing_test("false", 4, SHARE_N4, [("false_line", 0)], "shared"))
    test("c2c separate lines, 4 threads lock-step",
         sharing_test("separate", 4, SHARE_N4, [("separate_lines", 64 * i) for i in range(4)], "zero"))
    with open(os.path.join(outdir, "timings.txt"), "w") as f:
        for k, v in timings.items():
            f.write(f"{k} {' '.join(f'{x:.3f}' for x in v)}\n")
    passed = sum(results)
    print(f"{passed} passed, {len(results) - passed} failed")
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())

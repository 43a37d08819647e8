#!/usr/bin/env python3
"""Run the series' `compile_fail` doctests against a built kernel.

The kernel turns doctests into KUnit cases (scripts/rustdoc_test_builder.rs),
which has no place for a test that must not compile: rustdoc hands every
doctest to the builder, which does not compile it. The doctests that show
what the type system forbids are therefore marked ```ignore,compile_fail``
in the sources, and this script runs them: each is compiled, as a crate of
its own, with the flags and crates of the kernel's own doctests
(rust/.doctests_kernel_generated.o.cmd of the build), and must fail with
the error code its `// error[EXXXX]` comment names. A compile that fails
with another error (a missing crate, a typo in the example) is a failure
too: the example must fail for the reason it shows. A control crate that
uses the same types the allowed way must compile, so that a broken setup
cannot pass as "every example failed".

Usage: rust_compile_fail.py <obj dir> <source dir>...
Prints KTAP with one case per example and the line "N passed, N failed";
exits 1 if any failed.
"""

import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

FENCE = re.compile(r"^\s*///\s?```(?P<attrs>[\w,]*)\s*$")
DOC = re.compile(r"^\s*///\s?(?P<text>.*)$")
ERROR = re.compile(r"error\[(E\d{4})\]")

# Uses each type the way the compile_fail examples must not: proves that the
# crates, flags and imports work, so that the examples fail for their reason.
CONTROL = """
use kernel::{bindings, mm::{folio::{Folio, Referenced, Unreferenced}, folio_batch::FolioBatch,
             folio_list::FolioList, list_lru::ListLru, lruvec::LruvecUnlocked}, sync::rcu};

fn swap_owned(a: &mut FolioBatch<Unreferenced>, b: &mut FolioBatch<Unreferenced>) {
    core::mem::swap(a, b);
}

fn replace_owned(a: &mut FolioBatch<Unreferenced>) -> FolioBatch<Unreferenced> {
    core::mem::replace(a, FolioBatch::new())
}

fn view_space(ptr: *mut bindings::folio_batch) -> usize {
    // SAFETY: Let `ptr` be a valid batch for the call.
    let view = unsafe { FolioBatch::<Unreferenced>::from_raw(ptr) };
    view.space()
}

fn list_is_empty(a: &FolioList<Unreferenced>) -> bool {
    a.is_empty()
}

fn needs_unlocked(_: &LruvecUnlocked) {}

fn after_the_lock(unlocked: &mut LruvecUnlocked, folio: &Folio<Referenced>) {
    let guard = unlocked.lock(folio);
    drop(guard);
    needs_unlocked(unlocked);
}

fn guard_first(lru: &ListLru, folio: &Folio<Unreferenced>) {
    let rcu = rcu::read_lock();
    let memcg = folio.memcg(&rcu);
    let guard = lru.lock(folio.nid(), memcg);
    drop(guard);
    drop(rcu);
}
"""


def examples(path):
    """Yield (line, code, expected error code) for each compile_fail example of `path`."""
    lines = path.read_text().splitlines()
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m or "compile_fail" not in m.group("attrs").split(","):
            i += 1
            continue
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not FENCE.match(lines[i]):
            d = DOC.match(lines[i])
            body.append(d.group("text") if d else "")
            i += 1
        i += 1
        # rustdoc's hidden lines ("# code", or a bare "#") are part of the
        # code; "#[attr]" and "#![attr]" are code as they are.
        code = "\n".join(re.sub(r"^#( |$)", "", line) for line in body)
        errors = ERROR.findall(code)
        yield start, code, errors[0] if errors else None


def rustc_command(obj):
    """The rustc command of the kernel's doctests, minus its input and outputs."""
    cmd_file = obj / "rust" / ".doctests_kernel_generated.o.cmd"
    if not cmd_file.exists():
        sys.exit(f"rust_compile_fail.py: error: {cmd_file} missing: build a kernel with "
                 "CONFIG_RUST_KERNEL_DOCTESTS first")
    first = cmd_file.read_text().splitlines()[0]
    cmd = first.split(":=", 1)[1]
    words = shlex.split(cmd)
    env = {}
    while words and re.match(r"^[A-Z_]+=", words[0]):
        k, v = words.pop(0).split("=", 1)
        env[k] = v
    out = []
    skip = False
    for w in words:
        if skip:
            skip = False
            continue
        if w in ("--out-dir",):
            skip = True
            continue
        if w.startswith("--emit=") or w.endswith(".rs") or w == "--crate-type":
            if w == "--crate-type":
                skip = True
            continue
        out.append(w)
    return env, out


def compile_crate(obj, env, cmd, code, tmp):
    src = Path(tmp) / "example.rs"
    src.write_text("#![allow(dead_code, missing_docs, unused_imports)]\n"
                   "use kernel::prelude::*;\n" + code + "\n")
    full = cmd + ["--crate-type", "rlib", "--crate-name", "compile_fail_example",
                  "--emit=metadata", "-o", str(Path(tmp) / "example.rmeta"), str(src)]
    r = subprocess.run(full, cwd=obj, env={**env, "PATH": "/usr/bin:/bin", "RUSTC_BOOTSTRAP": "1"},
                       capture_output=True, text=True)
    return r.returncode, r.stderr


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    obj = Path(sys.argv[1]).resolve()
    sources = [Path(p) for p in sys.argv[2:]]
    env, cmd = rustc_command(obj)
    cases = []
    with tempfile.TemporaryDirectory() as tmp:
        rc, err = compile_crate(obj, env, cmd, CONTROL, tmp)
        cases.append(("control: the allowed uses compile", rc == 0,
                      err.strip().splitlines()[:20] if rc else []))
        for d in sources:
            for path in sorted(d.rglob("*.rs")):
                for line, code, want in examples(path):
                    name = f"{path.relative_to(d.parent)}:{line}"
                    if not want:
                        cases.append((name, False, ["no '// error[EXXXX]' comment in the example"]))
                        continue
                    rc, err = compile_crate(obj, env, cmd, code, tmp)
                    got = ERROR.findall(err)
                    ok = rc != 0 and set(got) == {want}
                    why = [] if ok else ([f"compiled, but must fail with {want}"] if rc == 0 else
                                         [f"failed with {sorted(set(got))}, not {want}:"] +
                                         err.strip().splitlines()[:20])
                    cases.append((f"{name} fails with {want}", ok, why))
    print("KTAP version 1")
    print(f"1..{len(cases)}")
    for n, (name, ok, why) in enumerate(cases, 1):
        for w in why:
            print(f"# {w}")
        print(f"{'ok' if ok else 'not ok'} {n} {name}")
    passed = sum(ok for _, ok, _ in cases)
    print(f"{passed} passed, {len(cases) - passed} failed")
    return 0 if passed == len(cases) else 1


if __name__ == "__main__":
    sys.exit(main())

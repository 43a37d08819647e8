#!/usr/bin/env bash
# `make host-check`: the harness tested on the host, in seconds, without a
# kernel or a guest: pytest over scripts/tests/test_*.py (results.py, the
# report and mail scripts, boot.sh's failure paths), every shell script
# of scripts/, scripts/guest/ and scripts/bench/ through shellcheck, and
# the series' Rust through rustfmt --check.
# Writes $BUILD/host-check/results.tap (TAP 13, one line per test; `make
# check` counts it in its closing line), prints it, and last "N passed, N
# failed"; exits 1 if anything failed. --brief: only the failures and the
# counts.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

brief=0
case ${1:-} in
--brief) brief=1 ;;
"") ;;
*) die "usage: host_check.sh [--brief]" ;;
esac
out=$BUILD/host-check
tap=$out/results.tap
rm -rf "$out" && mkdir -p "$out"
# Debian's interpreter with Debian's python3-pytest (`make deps`), not
# whatever python3 comes first in PATH (a pyenv shim, say).
py=/usr/bin/python3
need shellcheck
[ -x /usr/bin/rustfmt ] || die "no /usr/bin/rustfmt (rustfmt-web); run 'make deps' first"
"$py" -c 'import pytest' 2>/dev/null || die "no pytest for $py; run 'make deps' first"

# A test of the check path runs `make check` (minus the kernel), which runs
# this script again: there, it only says so.
if [ -n "${HOST_CHECK_NESTED:-}" ]; then
	printf 'TAP version 13\n1..0 # SKIP inside the host checks\n# host-check: 0 passed, 0 failed\n' >"$tap"
	exit 0
fi

# pytest: one result per test (JUnit XML), its own output in pytest.log.
HOST_CHECK_NESTED=1 PYTHONDONTWRITEBYTECODE=1 "$py" -m pytest -q -p no:cacheprovider \
	--junitxml="$out/pytest.xml" "$TOP/scripts/tests" >"$out/pytest.log" 2>&1 || true

# check TOOL FILE COMMAND...: runs COMMAND (from $TOP) for FILE, a path
# under $TOP; its output goes to $out/TOOL-<file>.log and "rc FILE" to
# $out/TOOL.txt, one result each below.
check() {
	local tool=$1 name=$2 rc=0
	shift 2
	(cd "$TOP" && "$@") >"$out/$tool-${name//\//_}.log" 2>&1 || rc=$?
	echo "$rc $name" >>"$out/$tool.txt"
}

# Every script whose first line names a shell, or that says
# "# shellcheck shell=" (lib.sh).
: >"$out/shellcheck.txt"
for f in "$TOP"/scripts/*.sh "$TOP"/scripts/guest/* "$TOP"/scripts/bench/*; do
	[ -f "$f" ] || continue
	head -n1 "$f" | grep -qE '^#!.*(/|env )(ba|da|k|busybox )?sh|^# shellcheck shell=' || continue
	check shellcheck "${f#"$TOP"/}" shellcheck -x "${f#"$TOP"/}"
done

# rustfmt over the series' Rust, as the kernel's `make rustfmtcheck` runs it
# (Debian's rustfmt of rustc-web, with the options of the kernel's
# .rustfmt.toml): one result per file, without a kernel tree.
: >"$out/rustfmt.txt"
for f in "$TOP"/rust/kernel/mm/*.rs "$TOP"/mm/*.rs; do
	[ -f "$f" ] || continue
	check rustfmt "${f#"$TOP"/}" /usr/bin/rustfmt --check --color never --edition 2021 \
		--config newline_style=Unix "${f#"$TOP"/}"
done

# The compile_fail examples of the series' Rust (scripts/rust_compile_fail.py),
# against the kernel crate of CONFIG's build: in `make check`, the kernel just
# built; without a Rust build, one skipped result. The sources are those of the
# assembled tree, so that the examples of patches/local.series (the lruvec
# lock guard) are run too.
obj=$(obj_dir "${CONFIG:-test}")
if [ -f "$obj/rust/.doctests_kernel_generated.o.cmd" ]; then
	"$py" "$TOP/scripts/rust_compile_fail.py" "$obj" "$TREE/rust/kernel/mm" \
		>"$out/compile_fail.ktap" 2>&1 || true
fi

# One TAP file of them all.
"$py" - "$out" >"$tap.new" <<'EOF'
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

out = Path(sys.argv[1])
results = []  # (ok, name, directive, details)
try:
    suites = ET.parse(out / "pytest.xml").getroot()
    cases = list(suites.iter("testcase"))
except (OSError, ET.ParseError) as e:
    cases = []
    results.append((False, "pytest", "", f"no JUnit results ({e}); see pytest.log"))
for c in cases:
    name = f"pytest {c.get('classname', '').replace('.', '/')}.py::{c.get('name')}"
    bad = c.find("failure") if c.find("failure") is not None else c.find("error")
    skip = c.find("skipped")
    if bad is not None:
        results.append((False, name, "", (bad.get("message") or "") + "\n" + (bad.text or "")))
    elif skip is not None:
        results.append((True, name, f" # SKIP {skip.get('message') or ''}".rstrip(), ""))
    else:
        results.append((True, name, "", ""))
if not cases and not results:
    results.append((False, "pytest", "", "no tests collected; see pytest.log"))
for tool in ("shellcheck", "rustfmt"):
    for line in (out / f"{tool}.txt").read_text().splitlines():
        rc, name = line.split(" ", 1)
        log = out / f"{tool}-{name.replace('/', '_')}.log"
        results.append((rc == "0", f"{tool} {name}", "", log.read_text()))
cf = out / "compile_fail.ktap"
if not cf.exists():
    results.append((True, "rust compile_fail", " # SKIP no Rust kernel built for this CONFIG", ""))
else:
    text = cf.read_text()
    cases, details = [], []
    for line in text.splitlines():
        m = re.match(r"^(not )?ok \d+ (.*)$", line)
        if m:
            cases.append((not m.group(1), f"rust compile_fail {m.group(2)}", "", "\n".join(details)))
            details = []
        elif line.startswith("# "):
            details.append(line[2:])
    results.extend(cases or [(False, "rust compile_fail", "", text)])
print("TAP version 13")
print(f"1..{len(results)}")
for n, (ok, name, directive, details) in enumerate(results, 1):
    print(f"{'ok' if ok else 'not ok'} {n} {name.replace('#', '_')}{directive}")
    if not ok:
        for d in details.strip().splitlines()[-30:]:
            print(f"# {d}")
passed = sum(1 for ok, _, d, _ in results if ok and not d)
skipped = sum(1 for ok, _, d, _ in results if d)
failed = sum(1 for ok, *_ in results if not ok)
print(f"# host-check: {passed} passed, {failed} failed, {skipped} skipped")
EOF
mv "$tap.new" "$tap"

if [ $brief = 1 ]; then
	awk '/^not ok/ { show = 1; print; next } /^(ok|not ok) / { show = 0 } show && /^#/' "$tap"
else
	cat "$tap"
fi
counts=$(sed -n 's/^# host-check: \([0-9]*\) passed, \([0-9]*\) failed.*/\1 \2/p' "$tap")
if [ $brief = 1 ]; then
	# Inside `make check`, whose own closing line counts these.
	echo "host-check: ${counts% *} passed, ${counts#* } failed ($tap)"
else
	echo "host-check: $tap; details in $out/"
	echo "${counts% *} passed, ${counts#* } failed"
fi
[ "${counts#* }" = 0 ] || exit 1

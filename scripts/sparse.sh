#!/usr/bin/env bash
# A sparse that Linux 7.3 accepts, for `make matrix`'s w1-sparse entry.
#
# 7.3 runs the checker only if scripts/checker-valid.sh accepts it (it must
# parse __typeof_unqual__, which include/linux/compiler_types.h uses under
# __CHECKER__); otherwise `make C=1` prints one make warning and checks
# nothing. Debian 12's sparse 0.6.4 fails that test. In order:
#   SPARSE=path         your own sparse (it must pass the test);
#   $BUILD/sparse       built here from Debian's source package of sparse
#                       0.6.5~rc1 (unstable), fetched with apt-get source
#                       under a private apt configuration (the archive's
#                       signed Sources index checks it; the tarball's sha256
#                       is pinned too) and built with the host's gcc (~10 s),
#                       its token buffer raised from 8191 to 65535 bytes:
#                       7.3's trace event headers expand to longer tokens
#                       ("error: too long token expansion"), and after an
#                       error while preprocessing sparse says nothing more
#                       about the whole file (mm/vmscan.c among them);
#   sparse on PATH      if that cannot be built and 7.3 accepts it (a
#                       distribution's keeps the short buffer: make matrix
#                       then fails the files it cuts short, and says so).
#
# Prints the path of the sparse to use on its last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

SRC_PACKAGE=sparse
SRC_VERSION=0.6.5~rc1-2
SRC_SUITE=sid
ORIG=sparse_0.6.5~rc1.orig.tar.gz
ORIG_SHA256=3ac8855ec7f3ab92f325be0f64347ccc2b10f8b4d7c2906783ee8e2bdab3f0de
MAX_STRING=65535
RECIPE="$SRC_VERSION MAX_STRING=$MAX_STRING"

# The kernel's own test of a checker: the assembled tree's, else the base's.
checker_valid=
for f in "$TREE"/scripts/checker-valid.sh "$BUILD"/base/*/scripts/checker-valid.sh; do
	if [ -f "$f" ]; then
		checker_valid=$f
		break
	fi
done
[ -n "$checker_valid" ] || die "no scripts/checker-valid.sh to test sparse with (make tree first)"
valid() { [ -x "$1" ] && [ "$(sh "$checker_valid" "$1" -m64 2>/dev/null)" = 1 ]; }

if [ -n "${SPARSE:-}" ]; then
	SPARSE=$(command -v "$SPARSE" || echo "$SPARSE")
	valid "$SPARSE" || die "SPARSE=$SPARSE: Linux 7.3's scripts/checker-valid.sh rejects it (too old for __typeof_unqual__?)"
	echo "$SPARSE"
	exit 0
fi
sys=$(command -v sparse || true)
out=$BUILD/sparse
if [ "$(cat "$out/.recipe" 2>/dev/null)" = "$RECIPE" ] && valid "$out/sparse"; then
	echo "$out/sparse"
	exit 0
fi

# Building it failed: the sparse on PATH, if 7.3 accepts it.
fallback() {
	if [ -n "$sys" ] && valid "$sys"; then
		step "sparse: $1; using $sys (its token buffer may cut files short)" >&2
		echo "$sys"
		exit 0
	fi
	die "$1; and ${sys:-no sparse on PATH}${sys:+ is too old for 7.3}: set SPARSE= to a sparse of 0.6.5 or later"
}

step "sparse: building $SRC_PACKAGE $SRC_VERSION from Debian's source (${sys:-no sparse on PATH}${sys:+: $("$sys" --version 2>/dev/null)})" >&2
mirror=$(debian_mirror)
[ -n "$mirror" ] || fallback "no Debian mirror in /etc/apt to fetch $SRC_PACKAGE's source from"
apt=$BUILD/apt-src dl=$BUILD/download
mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts" "$dl"
if ! { [ -f "$dl/$ORIG" ] && echo "$ORIG_SHA256  $dl/$ORIG" | sha256sum --quiet -c - >/dev/null 2>&1; }; then
	echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $mirror $SRC_SUITE main" >"$apt/sources.list"
	opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o "APT::Get::List-Cleanup=0")
	apt-get "${opts[@]}" update -q >"$apt/update.log" 2>&1 ||
		{ tail -5 "$apt/update.log" >&2; fallback "apt-get update of $SRC_SUITE's sources failed"; }
	(cd "$dl" && apt-get "${opts[@]}" source --download-only -q "$SRC_PACKAGE=$SRC_VERSION") \
		>"$apt/download.log" 2>&1 ||
		{ tail -5 "$apt/download.log" >&2; fallback "apt-get source $SRC_PACKAGE=$SRC_VERSION failed (no longer in $SRC_SUITE?)"; }
	[ -f "$dl/$ORIG" ] || fallback "apt-get source gave no $ORIG"
	echo "$ORIG_SHA256  $dl/$ORIG" | sha256sum --quiet -c - >/dev/null 2>&1 ||
		{ mv "$dl/$ORIG" "$dl/$ORIG.bad"; die "$ORIG: sha256 mismatch (kept as $dl/$ORIG.bad)"; }
fi
tmp=$out.tmp
rm -rf "$tmp" && mkdir -p "$tmp"
tar -xzf "$dl/$ORIG" -C "$tmp" --strip-components=1 || die "cannot unpack $ORIG"
grep -q '^#define MAX_STRING 8191$' "$tmp/token.h" || die "$ORIG: token.h has no '#define MAX_STRING 8191' to raise"
sed -i "s/^#define MAX_STRING 8191\$/#define MAX_STRING $MAX_STRING/" "$tmp/token.h"
make -C "$tmp" -j"$(nproc)" sparse HAVE_LIBXML=no HAVE_SQLITE=no >"$LOGS/sparse-build.log" 2>&1 ||
	{ tail -5 "$LOGS/sparse-build.log" >&2; die "building sparse failed (log: $LOGS/sparse-build.log)"; }
valid "$tmp/sparse" || die "the sparse built from $ORIG fails Linux 7.3's checker-valid.sh"
echo "$RECIPE" >"$tmp/.recipe"
rm -rf "$out" && mv "$tmp" "$out"
step "sparse: $out/sparse" >&2
echo "$out/sparse"

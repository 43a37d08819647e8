#!/usr/bin/env bash
# Fetch and unpack the pinned base: Linux 7.3.4.
#
# Default: Debian's linux-source-7.3 package (7.3.4 plus Debian's few
# stable backports), fetched with apt-get download under a private apt
# configuration built from the mirror this machine already uses; both the
# .deb and the tarball inside it are checked against pinned checksums.
#
# KERNEL_TARBALL=path: a linux-7.3.4.tar.{xz,gz} (e.g. kernel.org's).
# KERNEL_SRC=dir: a user's own 7.3.4 tree, used in place (read only).
#
# Prints the path of the unpacked source on its last line.
set -euo pipefail
. "$(dirname "$0")/lib.sh"

DEB_PACKAGE=linux-source-7.3
DEB_VERSION=7.3.4-1~bpo13+1
DEB_SUITE=trixie-backports
DEB_SHA256=703e369ddd4cce971452f5a593ee55df3a5c10c83caf0fa0df039633ed181ee3
TAR_NAME=linux-source-7.3.tar.xz
TAR_SHA256=76df1affb19f24926949369be1d74b60071c963c598ce8780bddd4bbf0fc3bc4
BASE_VERSION=7.3.4

KERNEL_SRC=${KERNEL_SRC:-}
KERNEL_TARBALL=${KERNEL_TARBALL:-}
DL=$BUILD/download
mkdir -p "$DL"

# A kernel tree whose Makefile says 7.3.4.
check_tree() {
	local dir=$1 v
	if [ ! -f "$dir/Makefile" ] || [ ! -f "$dir/mm/folio.c" ]; then
		die "$dir is not a Linux kernel tree (no Makefile or mm/folio.c)"
	fi
	v=$(awk '/^VERSION =/{a=$3} /^PATCHLEVEL =/{b=$3} /^SUBLEVEL =/{c=$3}
		END{print a"."b"."c}' "$dir/Makefile")
	[ "$v" = "$BASE_VERSION" ] ||
		die "$dir is Linux $v; this series is against $BASE_VERSION"
}

sha_ok() { echo "$2  $1" | sha256sum --quiet -c - >/dev/null 2>&1; }

# Unpack a tarball into build/base/<name>, atomically.
unpack() {
	local tarball=$1 name=$2 dest=$BUILD/base/$2 tmp top
	if [ -f "$dest/.unpacked" ]; then
		echo "$dest"
		return
	fi
	step "unpacking $(basename "$tarball")" >&2
	tmp=$BUILD/base/.$name.tmp
	rm -rf "$tmp" && mkdir -p "$tmp"
	tar -xf "$tarball" -C "$tmp" || { rm -rf "$tmp"; die "cannot unpack $tarball"; }
	top=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d)
	[ "$(echo "$top" | wc -l)" = 1 ] || { rm -rf "$tmp"; die "$tarball: not one top directory"; }
	check_tree "$top"
	rm -rf "$dest" && mv "$top" "$dest" && rm -rf "$tmp"
	touch "$dest/.unpacked"
	echo "$dest"
}

# The .deb through a private apt configuration: its own lists and cache,
# one source line for the suite, built from the Debian mirror already in
# /etc/apt. Nothing under /etc is touched.
fetch_deb() {
	local deb=$DL/${DEB_PACKAGE}_${DEB_VERSION/:/%3a}_all.deb apt=$BUILD/apt mirror keyring
	if [ -f "$deb" ] && sha_ok "$deb" "$DEB_SHA256"; then
		echo "$deb"
		return
	fi
	mirror=$(debian_mirror)
	[ -n "$mirror" ] || die "no Debian mirror found in /etc/apt to fetch $DEB_PACKAGE from; use KERNEL_TARBALL= or KERNEL_SRC="
	keyring=/usr/share/keyrings/debian-archive-keyring.gpg
	mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/parts"
	echo "deb [signed-by=$keyring] $mirror $DEB_SUITE main" >"$apt/sources.list"
	local opts=(-o "Dir::Etc::SourceList=$apt/sources.list"
		-o "Dir::Etc::SourceParts=$apt/parts"
		-o "Dir::State::Lists=$apt/lists"
		-o "Dir::Cache=$apt/cache"
		-o "APT::Get::List-Cleanup=0")
	step "apt: fetching $DEB_PACKAGE $DEB_VERSION from $DEB_SUITE" >&2
	apt-get "${opts[@]}" update -q >"$apt/update.log" 2>&1 ||
		{ tail -5 "$apt/update.log" >&2; die "apt-get update of $DEB_SUITE failed"; }
	(cd "$DL" && apt-get "${opts[@]}" download -q "$DEB_PACKAGE=$DEB_VERSION") \
		>"$apt/download.log" 2>&1 ||
		{
			tail -5 "$apt/download.log" >&2
			# The archive keeps one version of a package per suite: a newer
			# upload to $DEB_SUITE replaces the pinned one.
			apt-cache "${opts[@]}" madison "$DEB_PACKAGE" 2>/dev/null | grep -qF "| $DEB_VERSION |" ||
				die "apt-get download $DEB_PACKAGE=$DEB_VERSION failed: $DEB_SUITE no longer has that version; use KERNEL_TARBALL= (a linux-7.3.4 tarball) or KERNEL_SRC="
			die "apt-get download $DEB_PACKAGE=$DEB_VERSION failed"
		}
	sha_ok "$deb" "$DEB_SHA256" || {
		mv "$deb" "$deb.bad"
		die "$deb: sha256 mismatch (kept as $deb.bad)"
	}
	echo "$deb"
}

if [ -n "$KERNEL_SRC" ]; then
	[ -d "$KERNEL_SRC" ] || die "KERNEL_SRC=$KERNEL_SRC is not a directory"
	KERNEL_SRC=$(cd "$KERNEL_SRC" && pwd)
	check_tree "$KERNEL_SRC"
	echo "$KERNEL_SRC"
elif [ -n "$KERNEL_TARBALL" ]; then
	[ -f "$KERNEL_TARBALL" ] || die "KERNEL_TARBALL=$KERNEL_TARBALL: no such file"
	case $KERNEL_TARBALL in
	*.tar.xz | *.tar.gz | *.tgz | *.tar) ;;
	*) die "KERNEL_TARBALL=$KERNEL_TARBALL: not a .tar.xz/.tar.gz/.tar" ;;
	esac
	xz -t "$KERNEL_TARBALL" 2>/dev/null || gzip -t "$KERNEL_TARBALL" 2>/dev/null ||
		tar -tf "$KERNEL_TARBALL" >/dev/null 2>&1 ||
		die "KERNEL_TARBALL=$KERNEL_TARBALL: corrupt archive"
	sum=$(sha256sum "$KERNEL_TARBALL" | cut -c1-16)
	unpack "$KERNEL_TARBALL" "tarball-$sum"
else
	deb=$(fetch_deb)
	tarball=$DL/$TAR_NAME
	if ! { [ -f "$tarball" ] && sha_ok "$tarball" "$TAR_SHA256"; }; then
		step "extracting $TAR_NAME from the .deb" >&2
		tmp=$DL/.deb.tmp
		rm -rf "$tmp" && mkdir -p "$tmp"
		dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$tmp" --wildcards "*/$TAR_NAME" ||
			die "cannot extract $TAR_NAME from $deb"
		mv "$(find "$tmp" -name "$TAR_NAME")" "$tarball.part" && rm -rf "$tmp"
		sha_ok "$tarball.part" "$TAR_SHA256" || {
			mv "$tarball.part" "$tarball.bad"
			die "$TAR_NAME: sha256 mismatch (kept as $tarball.bad)"
		}
		mv "$tarball.part" "$tarball"
	fi
	unpack "$tarball" "debian-$DEB_VERSION"
fi

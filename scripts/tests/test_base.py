"""scripts/base.sh when the archive no longer has the pinned package.

Debian's archive keeps one version of a package per suite: the day a newer
linux-source-7.3 reaches trixie-backports, the pinned 7.3.4-1~bpo13+1 is
gone and `apt-get download` fails on every fresh machine. base.sh says so,
and what to use instead, in one line. apt-get and apt-cache are stubs here
(no network): `update` succeeds, `download` fails as apt does, and
`madison` lists the version the archive holds.
"""

import os
import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]

APT_GET = """#!/bin/sh
for a in "$@"; do
	case $a in
	update) exit 0 ;;
	download) echo "E: Version '7.3.4-1~bpo13+1' for 'linux-source-7.3' was not found" >&2; exit 100 ;;
	esac
done
exit 1
"""

APT_CACHE = """#!/bin/sh
echo "linux-source-7.3 | $ARCHIVE_HAS | http://mirror trixie-backports/main amd64 Packages"
"""


def base_sh(tmp_path, archive_has):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    for name, text in (("apt-get", APT_GET), ("apt-cache", APT_CACHE)):
        (bindir / name).write_text(text)
        (bindir / name).chmod(0o755)
    e = dict(os.environ, PATH=f"{bindir}:{os.environ['PATH']}", BUILD=str(tmp_path / "build"),
             ARCHIVE_HAS=archive_has)
    for k in ("KERNEL_SRC", "KERNEL_TARBALL"):
        e.pop(k, None)
    return subprocess.run([str(TOP / "scripts/base.sh")], env=e, capture_output=True, text=True,
                          timeout=60)


@pytest.fixture(autouse=True)
def mirror():
    if not any(Path(p).exists() for p in ("/etc/apt/sources.list", "/etc/apt/sources.list.d")):
        pytest.skip("no /etc/apt: base.sh finds no Debian mirror before it gets here")


def test_a_replaced_version_says_what_to_use_instead(tmp_path):
    r = base_sh(tmp_path, "7.3.5-1~bpo13+1")
    assert r.returncode == 1
    errors = [l for l in r.stderr.splitlines() if "error:" in l]
    assert errors == ["base.sh: error: apt-get download linux-source-7.3=7.3.4-1~bpo13+1 failed: "
                      "trixie-backports no longer has that version; use KERNEL_TARBALL= "
                      "(a linux-7.3.4 tarball) or KERNEL_SRC="], r.stderr


def test_another_download_failure_says_only_that(tmp_path):
    r = base_sh(tmp_path, "7.3.4-1~bpo13+1")
    assert r.returncode == 1
    errors = [l for l in r.stderr.splitlines() if "error:" in l]
    assert errors == ["base.sh: error: apt-get download linux-source-7.3=7.3.4-1~bpo13+1 failed"]

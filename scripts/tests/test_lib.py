"""scripts/lib.sh's ERR trap: a script that set -e ends says which command
failed (a CI run once ended "make: *** [kselftests] Error 1" and nothing
else); a die in a subshell, which has said why already, is not said twice.
"""

import subprocess
from pathlib import Path

import pytest

TOP = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("body,stderr", [
    # What set -e would end the script at without a word.
    ("x=$(false | cat)", "s.sh: error: line 4: `x=$(false | cat)` failed (exit 1)"),
    # die said why already, in a command substitution or a pipeline: once.
    ('f() { die "the reason"; }; x=$(f)', "s.sh: error: the reason"),
    ('echo a | while read -r l; do die "the reason"; done', "s.sh: error: the reason"),
])
def test_a_failed_command_is_named_once(tmp_path, body, stderr):
    """lib.sh's ERR trap: set -e's silent exit says which command failed."""
    script = tmp_path / "s.sh"
    script.write_text(f'#!/usr/bin/env bash\nset -euo pipefail\n. "{TOP}/scripts/lib.sh"\n'
                      f'{body}\necho never\n')
    script.chmod(0o755)
    r = subprocess.run([str(script)], capture_output=True, text=True, timeout=30)
    assert r.returncode == 1
    assert "never" not in r.stdout
    assert r.stderr.strip() == stderr

#!/usr/bin/env bash
# Check the make variables before any step runs (one clear line if wrong).
set -euo pipefail
. "$(dirname "$0")/lib.sh"
check_settings

# tests/faults/lib.sh -- the fault scripts use the interop scripts' helpers (bash), with their
# own temporary-folder prefix. Source it after setting BIN (the folder holding rc-bench-*,
# tirpc-bench-*).
RC_TMP_PREFIX=rc-faults
# shellcheck source=../interop/lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/../interop/lib.sh"

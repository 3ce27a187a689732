#!/usr/bin/env bash
# Checks the contracts: `buf lint`, then `buf breaking` against the previous commit (once that
# commit has contracts: before, and in a shallow clone without history, the check is skipped).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"
ensure_buf

log "buf lint"
"$BUF" lint

against="${OKEY_BUF_AGAINST:-HEAD~1}"
if git rev-parse --verify --quiet "$against^{commit}" >/dev/null &&
   git cat-file -e "$against:buf.yaml" 2>/dev/null &&
   git cat-file -e "$against:proto/okey/v1" 2>/dev/null; then
  log "buf breaking against $against"
  "$BUF" breaking --against ".git#ref=$against"
else
  log "buf breaking skipped: $against has no contracts to compare with"
fi

#!/usr/bin/env bash
# Checks the Helm chart offline (`make chart`, part of `make test`): installs the Helm SDK for
# Python (helm-python-sdk, which embeds Helm; no helm binary, no cluster) and kubernetes-validate
# into the tools venv, then runs tests/helm/check_chart.py: lint --strict, render with the defaults
# and helm/values-production.yaml, kubernetes-validate --strict, and the chart's assertions.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
cd "$ROOT"

# Pinned: the check's results must not move with a new release of either.
HELM_SDK=helm-python-sdk==0.2.2
KUBE_VALIDATE=kubernetes-validate==1.37.0

if [ ! -x "$VENV/bin/python" ]; then
  mkdir -p "$TOOLS_DIR"
  python3 -m venv "$VENV" 2>/dev/null || { apt_install python3-venv && python3 -m venv "$VENV"; }
fi
if ! "$VENV/bin/python" - "$HELM_SDK" "$KUBE_VALIDATE" <<'PY' 2>/dev/null
import sys
from importlib.metadata import version
for pin in sys.argv[1:]:
    name, want = pin.split("==")
    if version(name) != want:
        sys.exit(1)
PY
then
  log "pip install $HELM_SDK $KUBE_VALIDATE"
  "$VENV/bin/python" -m pip install -q --disable-pip-version-check "$HELM_SDK" "$KUBE_VALIDATE"
fi

log "chart check (helm/okey)"
"$VENV/bin/python" tests/helm/check_chart.py

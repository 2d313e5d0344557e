#!/usr/bin/env bash
# Validates the deployment files: the Kubernetes manifests of deploy/kubernetes/ against
# Kubernetes' own OpenAPI schemas (kubernetes-validate, strict: unknown fields are errors), and
# deploy/Dockerfile with hadolint. The ConfigMap's gateway.toml is loaded by the gateway's own
# parser in its unit tests (gateway/src/config_file/tests.rs). No container engine runs here,
# so the image is not built by this script (see README, "Operating the gateway").
#
# Usage: scripts/deploy-check.sh
# Needs: Python >= 3.10 with venv and pip.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
KUBERNETES_VERSION=1.33.0

scripts/install-tools.sh deploy
venv=.tools/venv-deploy/bin
manifests=(deploy/kubernetes/*.yaml)
log "kubernetes-validate --strict, Kubernetes $KUBERNETES_VERSION: ${manifests[*]}"
"$venv/kubernetes-validate" --strict --kubernetes-version "$KUBERNETES_VERSION" "${manifests[@]}"
log "hadolint deploy/Dockerfile"
"$venv/hadolint" --no-color deploy/Dockerfile
log "the deployment files are valid"

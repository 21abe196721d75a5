#!/usr/bin/env bash
# Builds the test tools of the Kubernetes connector tests (issue 39) from the Go module proxy:
# kube-apiserver and kubectl of k8s.io/kubernetes v1.37.2 (go.mod pins its staging modules at v0.37.2),
# into .ci/kube-apiserver/bin/. Reuses the Go build cache, so a second run takes seconds.
# Prints the two paths as OPSAGENT_KUBE_APISERVER=... and OPSAGENT_KUBECTL=... lines.
set -euo pipefail
cd "$(dirname "$0")"
export CGO_ENABLED=0
mkdir -p bin
# What a release build stamps (hack/lib/version.sh); without it /version says v0.0.0-master.
V=v1.37.2
LDFLAGS=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  LDFLAGS="$LDFLAGS -X $p.gitVersion=$V -X $p.gitMajor=1 -X $p.gitMinor=37 -X $p.gitTreeState=clean"
done
nice -n 10 go build -ldflags "$LDFLAGS" -o bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
nice -n 10 go build -ldflags "$LDFLAGS" -o bin/kubectl k8s.io/kubernetes/cmd/kubectl
echo "OPSAGENT_KUBE_APISERVER=$PWD/bin/kube-apiserver"
echo "OPSAGENT_KUBECTL=$PWD/bin/kubectl"

//go:build tools

// Package kubeapiserver pins the commands that .ci/run builds from this module: the kube-apiserver the
// Kubernetes tests start, and the kubectl that applies deploy/kubernetes with a server-side dry run.
package kubeapiserver

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
)

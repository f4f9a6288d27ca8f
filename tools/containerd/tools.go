//go:build tools

// Package tools pins the containerd commands that tools/containerd-build.sh
// builds, so that go.mod and go.sum hold everything they need.
package tools

import (
	_ "github.com/containerd/containerd/v2/cmd/containerd"
	_ "github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2"
	_ "github.com/containerd/containerd/v2/cmd/ctr"
)

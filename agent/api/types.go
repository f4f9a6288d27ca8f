// Package api is the node agent's wire types and addresses: what its
// GET /lifecycle returns (Lifecycle, PodInfo, ContainerInfo, NameHolder,
// ManifestError; on the control socket, and on the read-only endpoint when
// it is on), the paths of its routes, and where its endpoints are by
// default (DefaultRootDir, ControlSocket). It is what a client of a running agent links (the
// podlife status, logs and shutdown commands, agent/client), without the
// agent itself; it imports no other agent package. Its kubelet
// counterpart is the kubelet's API types (pkg/kubelet/apis and the
// server's stats types).
package api

import (
	"slices"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Lifecycle is what GET /lifecycle returns and `podlife status` shows.
type Lifecycle struct {
	Pods []PodInfo `json:"pods"`
	// ManifestErrors are the manifest files, or the directory, the agent
	// cannot use.
	ManifestErrors []ManifestError `json:"manifestErrors,omitempty"`
}

// ManifestError is a manifest file, or the manifest directory, the agent
// cannot use, and why.
type ManifestError struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// PodInfo is one pod as the agent's /pods endpoint reports it.
type PodInfo struct {
	UID       types.UID `json:"uid"`
	Namespace string    `json:"namespace"`
	Name      string    `json:"name"`
	Static    bool      `json:"static"`
	// Manifest is the file the pod came from; "" for a pod known only to
	// the runtime.
	Manifest string `json:"manifest,omitempty"`
	// Config is desired (in a manifest), orphan (its manifest is gone),
	// runtime-only (found in the runtime, unknown to the engine) or
	// rejected (refused by admission, never given to the engine).
	Config string `json:"config"`
	// Lifecycle is the engine's state of the pod (a state of the
	// lifecycle table, such as Running or Terminating), "" when the engine
	// holds no record.
	Lifecycle string `json:"lifecycle,omitempty"`
	// Worker is the engine's phase: sync, terminating or terminated.
	Worker  string      `json:"worker,omitempty"`
	Phase   v1.PodPhase `json:"phase,omitempty"`
	Reason  string      `json:"reason,omitempty"`
	Message string      `json:"message,omitempty"`
	// InitContainers are the init containers and sidecars, in order.
	InitContainers []ContainerInfo `json:"initContainers,omitempty"`
	Containers     []ContainerInfo `json:"containers,omitempty"`
	// WaitingFor is, for a static pod held back because another UID still
	// holds its full name, that pod (set by Lifecycle).
	WaitingFor *NameHolder `json:"waitingFor,omitempty"`
}

// NameHolder is the pod holding a full name another pod waits for.
type NameHolder struct {
	UID types.UID `json:"uid"`
	// Manifest is its file; "" when its manifest is gone.
	Manifest string `json:"manifest,omitempty"`
}

// From is "(FILE)", or "(its manifest is gone)" for an orphan.
func (h NameHolder) From() string {
	if h.Manifest == "" {
		return "(its manifest is gone)"
	}
	return "(" + h.Manifest + ")"
}

// Restarts is the pod's total container restart count.
func (p PodInfo) Restarts() int32 {
	var n int32
	for _, c := range append(slices.Clone(p.InitContainers), p.Containers...) {
		n += c.Restarts
	}
	return n
}

// ContainerInfo is one container of a PodInfo.
type ContainerInfo struct {
	Name     string `json:"name"`
	State    string `json:"state"` // running, waiting or terminated
	Reason   string `json:"reason,omitempty"`
	ExitCode *int32 `json:"exitCode,omitempty"`
	Restarts int32  `json:"restarts"`
}

// Package shutdown stops a node's pods in priority order when the node is
// about to shut down, as the kubelet's graceful node shutdown manager does
// (semantics §6).
//
// It is pure logic: whatever notices the shutdown (systemd-logind, a
// signal) calls Manager.Shutdown with the pods that hold resources, and the
// Manager asks the engine to kill them band by band. The Manager is also an
// admission.Handler that rejects new pods once the shutdown began.
package shutdown

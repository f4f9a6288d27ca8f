// Package node keeps this node's Node object and its Lease in the API, as
// the kubelet does: it registers the Node (or adopts the one a previous run
// registered), writes its status when it changes and at least every
// StatusReportFrequency, and renews the node Lease in kube-node-lease with
// the kubelet's own lease controller (k8s.io/component-helpers).
//
// The caller runs Manager.Run for the life of the agent, reads the
// registered Node with Manager.Node (mirror pods need its UID), and calls
// Manager.SetShuttingDown when a graceful node shutdown begins.
package node

// Package podstatus is the node agent's status manager: it keeps each pod's
// latest status as the syncer generates it (read locally by /pods,
// admission and housekeeping) and, when the agent has an API server, writes
// those statuses to it the way the kubelet's status manager does
// (pkg/kubelet/status): as strategic merge patches of the status
// subresource, guarded by the pod's UID, never reporting a terminal phase
// while containers may still run, never undoing a terminal phase, keeping
// the conditions other components own, and deleting a terminated pod's API
// object once its deletion was requested and its runtime is gone.
//
// Writes go through a rate-limited work queue keyed by pod UID and are
// retried until they succeed; every pod is re-checked each sync period, so
// an API server that lost writes gets them again.
package podstatus

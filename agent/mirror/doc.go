// Package mirror keeps the mirror pods of a node's static pods in the API,
// as the kubelet's mirror client and pod manager do: a mirror pod is the
// API's read-only copy of a static pod, owned by the Node, so that the
// cluster sees what the node runs from its manifests.
//
// The caller runs Manager.Sync at each housekeeping with the admitted
// static pods that are not terminating and the mirror pods its informer
// sees on the node; Sync creates, recreates and deletes mirror pods until
// the two agree.
package mirror

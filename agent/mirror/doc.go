// Package mirror keeps the mirror pods of a node's static pods in the API,
// as the kubelet's mirror client and pod manager do: a mirror pod is the
// API's read-only copy of a static pod, owned by the Node, so that the
// cluster sees what the node runs from its manifests.
//
// The caller runs Manager.Sync at each housekeeping with the static pods
// whose mirrors are due (started and not terminating: the kubelet
// reconciles a mirror in its static pod's sync, which waits while an older
// pod of the same full name stops) and the mirror pods its informer sees on
// the node; Sync creates, recreates and deletes mirror pods until the two
// agree.
package mirror

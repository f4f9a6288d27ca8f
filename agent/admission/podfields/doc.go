// Package podfields is podlife's table of every pod field it knows, each
// honoured (and by what), refused (with the reason a user reads) or
// meaningless on a node (and why), and the admission check that refuses a
// pod setting a refused field. It is the node's side of what the kubelet
// gets from its admit handlers (pkg/kubelet/lifecycle, which reject a pod
// the node cannot run) together with its feature gates (a field whose gate
// is off is dropped by the API server, and a kubelet without the feature
// ignores it): podlife has no gates, so it fails closed instead, and a
// field it does not apply stops the pod at admission rather than run it
// with less than its spec asks for.
//
// The table covers, by reflection over k8s.io/api's types, every field of
// v1.PodSpec, v1.Container (and v1.EphemeralContainer), v1.PodSecurityContext
// and v1.SecurityContext, and of the types below them that a row needs:
// volume sources, probe and lifecycle handlers, env sources, resources,
// ports and volume mounts. Its tests fail when a field has no row or a row
// names no field, so a field a future k8s.io/api adds is never ignored in
// silence; the README's list of refused fields is generated from it.
package podfields

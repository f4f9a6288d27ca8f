// Package spec is podlife's pod lifecycle written once, as data.
//
// The table (Table) lists every transition of one pod UID's lifecycle record:
// the state it leaves, the event that triggers it, a guard, the state it
// enters, the record variables it writes and the effects the engine must
// carry out. Guards and updates are expressions (Expr), not Go closures, so
// that the generator in ../gen can render the same table as Go (package fsm)
// and as TLA+ (tla/PodLifecycleTable.tla). Validate proves the table is
// deterministic, total for inputs from the outside world, closed under its
// variable domains, and that every state is reachable.
//
// The semantics follow the kubelet's pod workers (see
// docs/semantics.md, section 1.5a, rows T1 to T25).
//
// A second table, ContainerTable (files container_*.go), is one container
// of a pod and the pod-level facts that gate it (kubelet: kuberuntime's
// computePodActions and computeInitContainerActions), with its own
// properties (ContainerProperties). Both tables go through the same
// expression language, Validate and Reachable, described by a Schema
// (PodSchema, ContainerSchema).
// This package imports nothing from fsm/ or worker/.
package spec

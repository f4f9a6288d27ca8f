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
// A second table, in package spec/container, is one container of a pod
// and the pod-level facts that gate it (kubelet: kuberuntime's
// computePodActions and computeInitContainerActions). Both tables go
// through this package's expression language, Validate and Reachable,
// each described by a Schema (PodSchema here, container.Schema there).
// This package imports nothing from fsm/ or worker/.
package spec

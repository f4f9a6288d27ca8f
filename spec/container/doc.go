// Package container is the container lifecycle written once, as data: one
// container instance's lifecycle inside a pod and the pod-level facts that
// gate it (kubelet: kuberuntime's computePodActions and
// computeInitContainerActions). Its rows (Table), properties (Properties)
// and named operators (Operators) are written in package spec's expression
// language and pass the same Validate and Reachable through Schema; gen
// renders them as the Go guards of fsm/container and as
// tla/ContainerLifecycleTable.tla and tla/ContainerLifecycleProperties.tla.
package container

// Package container model-checks the container lifecycle table the way
// package explore checks the pod table: a breadth-first explorer of one
// pod's containers under exactly the actions of tla/ContainerLifecycle.tla
// (the kubelet's decisions, instances that exit with the configured
// codes, startup and liveness probes, long runs, spec changes, the
// sandbox's death and re-creation, deletion), on the bounds of the
// tla/MCContainer*.tla configurations, with the same distinct states TLC
// finds. Every container transition is fsm/container.Fire, the generated
// guards and updates podlife's plan runs (kubelet: kuberuntime's
// computePodActions and computeInitContainerActions); what is written here
// is only the model's part (the pod-level facts, the phase as the kubelet's
// getPhase computes it, the sandbox and the runtime). It checks
// spec/container's Properties, evaluated from their expressions: the
// invariants on every state, the step properties on every step, and the
// leads-to properties on the explored graph under the model's fairness.
package container

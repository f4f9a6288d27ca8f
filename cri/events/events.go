// Package events holds the reasons and message forms of the events the
// node agent records about pods, each written once and each the kubelet's
// (kubelet: pkg/kubelet/events for the reasons; the messages are those of
// pkg/kubelet/kuberuntime, prober, images and
// pkg/volume/util/operationexecutor). The upstream e2e suites select
// events by reason and match their messages, so a text here changes only
// with the kubelet's.
package events

import (
	"fmt"

	v1 "k8s.io/api/core/v1"
)

// Container event reasons.
const (
	CreatedContainer        = "Created"
	StartedContainer        = "Started"
	FailedToCreateContainer = "Failed"
	FailedToStartContainer  = "Failed"
	KillingContainer        = "Killing"
	BackOffStartContainer   = "BackOff"
	FailedPostStartHook     = "FailedPostStartHook"
	FailedPreStopHook       = "FailedPreStopHook"
)

// Image event reasons.
const (
	PullingImage            = "Pulling"
	FailedToPullImage       = "Failed"
	ErrImageNeverPullPolicy = "ErrImageNeverPull"
)

// Pod event reasons.
const (
	FailedMountVolume      = "FailedMount"
	SandboxChanged         = "SandboxChanged"
	FailedCreatePodSandBox = "FailedCreatePodSandBox"
	DNSConfigForming       = "DNSConfigForming"
	MissingClusterDNS      = "MissingClusterDNS"
)

// Probe event reasons.
const (
	ContainerUnhealthy    = "Unhealthy"
	ContainerProbeWarning = "ProbeWarning"
)

// Messages of the events above, in the kubelet's words.
const (
	// SandboxChangedMessage: the pod's sandbox is replaced.
	SandboxChangedMessage = "Pod sandbox changed, it will be killed and re-created."
	// PostStartHookFailed and PreStopHookFailed leave the hook's output
	// out, as the kubelet does: it may hold secrets.
	PostStartHookFailed = "PostStartHook failed"
	PreStopHookFailed   = "PreStopHook failed"
	// KillPostStartHook is the Killing event's message when a postStart
	// hook failed (the kubelet's killContainer message).
	KillPostStartHook = "FailedPostStartHook"
)

// FailedMount is the event of a volume that could not be set up: the
// operation executor's simple message, "<op> for volume <name> : <err>".
func FailedMount(volume string, err error) string {
	return fmt.Sprintf("MountVolume.SetUp failed for volume %q : %v", volume, err)
}

// UnableToMount is the event of a pod whose volumes are not all set up for
// a reason that is no one volume's.
func UnableToMount(err error) string {
	return fmt.Sprintf("Unable to attach or mount volumes: %v", err)
}

// FailedCreateSandbox is the event of a sandbox that could not be made:
// err is the error as generating its config or the runtime gave it.
func FailedCreateSandbox(err error) string {
	return fmt.Sprintf("Failed to create pod sandbox: %v", err)
}

// ContainerError is the Failed event of a container that could not be
// created or started.
func ContainerError(err error) string {
	return fmt.Sprintf("Error: %v", err)
}

// BackOffRestart is the BackOff event of a container in crash-loop
// back-off.
func BackOffRestart(container string, pod *v1.Pod) string {
	return fmt.Sprintf("Back-off restarting failed container %s in pod %s", container, PodDesc(pod))
}

// Created and Started name the container: podlife's events are about the
// pod (no field path to a container), where the kubelet's say "Container
// created" about the container itself.
func Created(container string) string { return "Created container " + container }

// Started: see Created.
func Started(container string) string { return "Started container " + container }

// Stopping is the Killing event of a container stopped with its pod.
func Stopping(container string) string { return "Stopping container " + container }

// Why a running container is killed (computePodActions' messages).
func DefinitionChanged(container string) string {
	return fmt.Sprintf("Container %s definition changed", container)
}

// FailedProbe is the kill message of a container whose liveness or
// startup probe failed; probe is "liveness" or "startup".
func FailedProbe(container, probe string) string {
	return fmt.Sprintf("Container %s failed %s probe", container, probe)
}

// WillRestart adds that the killed container is started again.
func WillRestart(message string) string { return message + ", will be restarted" }

// Pulling is the event of an image pull started.
func Pulling(image string) string { return fmt.Sprintf("Pulling image %q", image) }

// FailedPull is the event of a failed image pull.
func FailedPull(image string, err string) string {
	return fmt.Sprintf("Failed to pull image %q: %s", image, err)
}

// NeverPull is the event and waiting message of an absent image under
// pull policy Never.
func NeverPull(image string) string {
	return fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
}

// ProbeWarning and ProbeFailed are the prober's events; kind is the
// probe's name as the kubelet writes it ("Liveness", "Readiness",
// "Startup").
func ProbeWarning(kind, output string) string {
	return fmt.Sprintf("%s probe warning: %s", kind, output)
}

// ProbeFailed: see ProbeWarning.
func ProbeFailed(kind, output string) string {
	return fmt.Sprintf("%s probe failed: %s", kind, output)
}

// PodDesc names a pod in messages as the kubelet's format.Pod:
// <name>_<namespace>(<uid>).
func PodDesc(pod *v1.Pod) string {
	if pod == nil {
		return "<nil>"
	}
	return fmt.Sprintf("%s_%s(%s)", pod.Name, pod.Namespace, pod.UID)
}

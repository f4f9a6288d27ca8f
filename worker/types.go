package worker

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	"k8s.io/utils/clock"

	"github.com/podlife/podlife/fsm"
)

// UpdateType is the kind of an UpdatePod call.
type UpdateType int

const (
	// SyncPodSync is a plain resync.
	SyncPodSync UpdateType = iota
	// SyncPodUpdate is a configuration change.
	SyncPodUpdate
	// SyncPodCreate is a newly admitted pod; while the UID is terminating it
	// only asks for a restart once it finished.
	SyncPodCreate
	// SyncPodKill requests termination; the only type a runtime-only pod
	// accepts.
	SyncPodKill
)

var updateTypeNames = [...]string{"sync", "update", "create", "kill"}

func (t UpdateType) String() string {
	if t >= 0 && int(t) < len(updateTypeNames) {
		return updateTypeNames[t]
	}
	return "unknown"
}

// RunningPod is a pod known only to the container runtime.
type RunningPod struct {
	ID         types.UID
	Name       string
	Namespace  string
	Sandboxes  []*runtimeapi.PodSandbox
	Containers []*runtimeapi.Container
}

// PodStatus is the runtime's view of a pod, as the syncer sees it.
type PodStatus struct {
	ID                types.UID
	Name, Namespace   string
	SandboxStatuses   []*runtimeapi.PodSandboxStatus
	ContainerStatuses []*runtimeapi.ContainerStatus
}

// KillPodOptions are the options of a kill; they only mean something while
// the pod is terminating.
type KillPodOptions struct {
	// CompletedCh is closed once the pod has no running container, or at
	// once when the kill cannot be kept (the pod already terminated, or is
	// not terminating). podlife closes every CompletedCh exactly once while
	// it runs; after Stop, the channels of pods that had not terminated stay
	// open (KillPod then returns an error wrapping ErrStopped).
	CompletedCh chan<- struct{}
	// Evict marks the pod evicted: its content may be removed at once.
	Evict bool
	// PodStatusFunc edits the final status; the latest registered wins.
	PodStatusFunc func(*v1.PodStatus)
	// PodTerminationGracePeriodSecondsOverride requests a grace period; it
	// applies only if shorter than the current one.
	PodTerminationGracePeriodSecondsOverride *int64
}

// UpdatePodOptions is one UpdatePod call.
type UpdatePodOptions struct {
	UpdateType UpdateType
	// StartTime is when the triggering event was seen; the latency until
	// the update is processed is observed. Coalescing keeps the oldest.
	StartTime time.Time
	// Pod is required unless RunningPod is set; when both are, RunningPod
	// is ignored.
	Pod *v1.Pod
	// MirrorPod is remembered from earlier updates when nil.
	MirrorPod *v1.Pod
	// RunningPod is a pod known only to the runtime; only with SyncPodKill.
	RunningPod     *RunningPod
	KillPodOptions *KillPodOptions
}

// PodSyncer does the work of each phase. Each method is retried until it
// succeeds before the next phase begins; calls for one UID never overlap.
type PodSyncer interface {
	// SyncPod sets up and keeps running a pod that may run. isTerminal
	// reports that the pod reached a terminal phase by itself.
	SyncPod(ctx context.Context, updateType UpdateType, pod, mirrorPod *v1.Pod, status *PodStatus) (isTerminal bool, err error)
	// SyncTerminatingPod stops every container within gracePeriod seconds
	// (nil: the pod's own setting) and applies podStatusFn to the status.
	SyncTerminatingPod(ctx context.Context, pod *v1.Pod, status *PodStatus, gracePeriod *int64, podStatusFn func(*v1.PodStatus)) error
	// SyncTerminatingRuntimePod stops a pod known only to the runtime.
	SyncTerminatingRuntimePod(ctx context.Context, runningPod *RunningPod) error
	// SyncTerminatedPod cleans up after every container stopped.
	SyncTerminatedPod(ctx context.Context, pod *v1.Pod, status *PodStatus) error
}

// EventRecorder records an event about a pod, Eventf style.
type EventRecorder interface {
	Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any)
}

// SyncPanicReason is the reason of the Warning event recorded on a pod whose
// sync function panicked.
const SyncPanicReason = "SyncPanic"

// PanicError is the error of a sync call that panicked. A shell hands it to
// Core.Done as the call's error: the Core counts the panic and backs off
// longer after each consecutive panic of the pod.
type PanicError struct {
	Func  fsm.InFlight
	Value any // what the sync function panicked with
}

func (e *PanicError) Error() string { return fmt.Sprintf("%s panicked: %v", e.Func, e.Value) }

// StatusCache supplies the runtime status the worker hands to the syncer.
type StatusCache interface {
	Get(uid types.UID) (*PodStatus, error)
}

// Options configure PodWorkers. The zero value works.
type Options struct {
	Clock          clock.WithTicker      // nil: the real clock
	ResyncInterval time.Duration         // 0: 1 minute
	BackOffPeriod  time.Duration         // 0: 10 seconds
	StatusCache    StatusCache           // nil: syncers get a status with only the pod's identity
	Registerer     prometheus.Registerer // nil: no metrics
	Observer       fsm.Observer          // nil: no trace; receives every transition
	Logger         *slog.Logger          // nil: no logs
	Recorder       EventRecorder         // nil: no events; a SyncPanic event when a sync function panics
	// SyncersReadRuntime: the syncer reads the runtime itself, once per
	// sync (cri/kuberuntime plans from its own view), so it gets the pod's
	// identity, not the StatusCache's status it would throw away; the
	// StatusCache then only says whether a pod in a terminal phase still
	// runs anything.
	SyncersReadRuntime bool
	// Jitter spreads a timer's delay (nil: uniformly over [d, 1.5d), as
	// the kubelet's requeues). A model checker or a test injects its own.
	Jitter func(d time.Duration) time.Duration
	// CheckedFSM runs looplab's full Event for every state change
	// (fsm.NewChecked) instead of the check against looplab's table as
	// looplab answered it when the engine started (fsm.New): the same rows
	// are refused, at ~5x the cost of a Fire. The explorer and the
	// engine's tests set it.
	CheckedFSM bool
}

// PodWorkerState is the phase a pod's worker is in.
type PodWorkerState int

const (
	// SyncPod: the pod should be set up and running.
	SyncPod PodWorkerState = iota
	// TerminatingPod: no new container may start; running ones are stopped.
	TerminatingPod
	// TerminatedPod: no container runs or will; cleanup runs.
	TerminatedPod
)

func (s PodWorkerState) String() string {
	switch s {
	case SyncPod:
		return "sync"
	case TerminatingPod:
		return "terminating"
	case TerminatedPod:
		return "terminated"
	}
	panic(fmt.Sprintf("unknown PodWorkerState %d", int(s)))
}

// workerState is the phase of a record in state s.
func workerState(s fsm.State) PodWorkerState {
	switch {
	case s.IsTerminated():
		return TerminatedPod
	case s.TerminationRequested():
		return TerminatingPod
	}
	return SyncPod
}

// PodWorkerSync summarises one record for SyncKnownPods' caller.
type PodWorkerSync struct {
	State     PodWorkerState
	Orphan    bool // not among the desired pods
	HasConfig bool // a real pod spec is known
	Static    bool // that spec is from a non-apiserver source
}

package cri

import (
	"context"
	"time"

	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// Limited are a runtime's services behind lanes of CRI calls (Limit).
type Limited struct {
	// Runtime and Images are the syncer's, the prober's and the hooks'.
	Runtime Runtime
	Images  Images
	// Poll is the status cache's, with a lane of one call of its own: the
	// poll (and housekeeping's read through it) never waits behind the
	// pods' calls. The cache makes one call at a time anyway.
	Poll Runtime
}

// Lanes size the lanes of Limit. Each kind of call has a lane of its own,
// so that no kind waits behind another, and a call that hangs holds a slot
// of its own lane only:
//
//	lane          calls                                     slots
//	kill          StopContainer; ExecSync under ForKill      no limit
//	              (preStop hooks)
//	sandbox stop  StopPodSandbox                             SandboxStops; 1 while
//	                                                        a kill call runs
//	exec          ExecSync (probes, postStart hooks,         ExecPerPod a pod,
//	              the kubelet API's run)                     ExecPerNode in all,
//	                                                        but a pod under its
//	                                                        fair share never waits
//	pull          PullImage                                  Pulls
//	change        RunPodSandbox, CreateContainer,            Changes
//	              StartContainer, RemoveContainer,           (Create and Start
//	              RemovePodSandbox                           first: changeLane)
//	read          statuses, lists, stats, streaming URLs     Changes
//
// A kill (a preStop hook, then the stop) waits for nothing: the kubelet
// bounds none, a stop spends its time waiting out the container's grace
// period (which costs the runtime nothing), and any limit would let that
// many long stops of other pods (containers that ignore SIGTERM, with long
// grace periods) hold every other pod's kill. Each pod's kill makes one
// call per container at most, and the grace period bounds it. Sandbox
// stops (the pod's network torn down, its pause process killed) have a
// lane of their own, each bounded by its deadline, and by default no
// limit either, as the kubelet's: a pod deleted is gone from the API only
// once its sandbox is stopped, and with 100 pods deleted at once a limit
// of 10 made the last of them wait out ten rounds of stops (tools/busy-node.sh:
// all stopped in 15.7 s against the kubelet's 10.1 s). They yield to
// kills, though, for KillFirstYield at most (killFirst).
type Lanes struct {
	// Changes is the size of the change and read lanes.
	Changes int
	// SandboxStops bounds the sandbox stop lane; < 1 is no limit (the
	// kubelet's).
	SandboxStops int
	// ExecPerPod and ExecPerNode bound the exec lane; < 1 is no limit.
	ExecPerPod, ExecPerNode int
	// Pulls bounds the pull lane: 1 pulls one image at a time (the
	// kubelet's serializeImagePulls), < 1 sets no limit.
	Pulls int
	// PullDeadline bounds each pull once it has its slot (the kubelet's
	// imagePullProgressDeadline: the CRI reports no progress of a pull,
	// so it bounds the whole pull); 0 is CallTimeout.
	PullDeadline time.Duration
	// KillFirstYield bounds how long a sandbox stop yields to kills
	// (killFirst); 0 is DefaultKillFirstYield.
	KillFirstYield time.Duration
	// Observe, when set, is told how long each call waited for its slot,
	// by lane name (LaneKill, ...): the lane-wait metric.
	Observe func(lane string, wait time.Duration)
}

// The exec lane's default shares. A pod's probes and hooks that answer in
// milliseconds never wait for one another in 4 slots; a pod whose execs
// hang (exec probes with a long timeoutSeconds, hooks that never return)
// holds 4 slots and delays only its own. 32 in all, while a burst of
// execs (each a process the runtime spawns in the container) queues in the
// agent rather than in the runtime, where their timeouts would already
// run. Once the 32 are taken, a pod holding less than its fair share (32
// divided among the pods that exec, at least 1) still gets a slot: eight
// pods whose execs hang cannot keep a ninth's postStart hook or probe
// waiting (sharedLane).
const (
	DefaultExecPerPod  = 4
	DefaultExecPerNode = 32
)

// DefaultKillFirstYield is how long a sandbox stop waits at most for the
// kills in flight before it runs anyway: long enough for a round of
// container stops to get their signals first, short enough that one
// day-long kill delays the other pods' cleanup by seconds, not a day.
const DefaultKillFirstYield = 10 * time.Second

// The lanes' names, for metrics.
const (
	LaneKill        = "kill"
	LaneSandboxStop = "sandbox_stop"
	LaneExec        = "exec"
	LanePull        = "pull"
	LaneChange      = "change"
	LaneRead        = "read"
	LanePoll        = "poll"
)

// Limit puts rt and images behind the lanes that l sizes. A call waits
// for its slot until its context ends; then it runs with its deadline
// (call.go), which starts only with the call.
func Limit(rt Runtime, images Images, l Lanes) Limited {
	if l.PullDeadline <= 0 {
		l.PullDeadline = CallTimeout
	}
	// One killFirst for both limiters: it counts every kill call.
	if l.KillFirstYield <= 0 {
		l.KillFirstYield = DefaultKillFirstYield
	}
	kf := newKillFirst(l.KillFirstYield)
	lim := &limiter{
		killFirst: kf, kill: nil, sandboxStop: newLane(l.SandboxStops), exec: newSharedLane(l.ExecPerPod, l.ExecPerNode),
		pull: newLane(l.Pulls), change: newChangeLane(l.Changes), read: newLane(l.Changes),
		pullDeadline: l.PullDeadline, observe: l.Observe,
	}
	poll := newLane(1)
	pollLim := &limiter{
		killFirst: kf, kill: poll, sandboxStop: poll, exec: newSharedLane(0, 1), pull: poll, change: newChangeLane(1), read: poll,
		pullDeadline: l.PullDeadline, observe: l.Observe, poll: true,
	}
	// The poll's lanes are all one slot: it only reads, one call at a
	// time; its exec and change lanes share nothing with the pods' either
	// (it makes no change, and execs nothing).
	return Limited{
		Runtime: &limitedRuntime{rt: rt, limiter: lim},
		Images:  &limitedImages{images: images, limiter: lim},
		Poll:    &limitedRuntime{rt: rt, limiter: pollLim},
	}
}

type limiter struct {
	kill, sandboxStop, pull, read lane
	change                        *changeLane
	exec                          *sharedLane
	killFirst                     *killFirst
	pullDeadline                  time.Duration
	observe                       func(string, time.Duration)
	poll                          bool
}

// takeKill takes a slot of the kill lane, counted by killFirst.
func (lim *limiter) takeKill(ctx context.Context) (func(), error) {
	return then(lim.kill.acquire, lim.killFirst.enterKill)(ctx)
}

// wait takes a slot of l, reporting the wait as lane name's.
func (lim *limiter) wait(ctx context.Context, name string, take func(context.Context) (func(), error)) (func(), error) {
	if lim.observe == nil {
		return take(ctx)
	}
	start := time.Now()
	release, err := take(ctx)
	if lim.poll {
		name = LanePoll
	}
	lim.observe(name, time.Since(start))
	return release, err
}

// call runs f in a slot of lane name, once one is free or ctx ends, under
// the deadline that deadline gives the call.
func call[T any](ctx context.Context, lim *limiter, name string, take func(context.Context) (func(), error),
	deadline func(context.Context) (context.Context, context.CancelFunc), f func(context.Context) (T, error)) (T, error) {
	release, err := lim.wait(ctx, name, take)
	if err != nil {
		var zero T
		return zero, err
	}
	defer release()
	ctx, cancel := deadline(ctx)
	defer cancel()
	return f(ctx)
}

// do is call for a method that returns only an error.
func do(ctx context.Context, lim *limiter, name string, take func(context.Context) (func(), error),
	deadline func(context.Context) (context.Context, context.CancelFunc), f func(context.Context) error) error {
	_, err := call(ctx, lim, name, take, deadline, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// callTimeout is the deadline of a call with nothing else to bound it.
func callTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	return bound(ctx, CallTimeout)
}

type limitedRuntime struct {
	rt Runtime
	*limiter
}

func (r *limitedRuntime) RunPodSandbox(ctx context.Context, config *runtimeapi.PodSandboxConfig, runtimeHandler string) (string, error) {
	return call(ctx, r.limiter, LaneChange, r.change.acquire, callTimeout, func(ctx context.Context) (string, error) {
		return r.rt.RunPodSandbox(ctx, config, runtimeHandler)
	})
}

func (r *limitedRuntime) StopPodSandbox(ctx context.Context, podSandboxID string) error {
	take := then(r.sandboxStop.acquire, r.killFirst.acquireCleanup)
	return do(ctx, r.limiter, LaneSandboxStop, take, callTimeout, func(ctx context.Context) error {
		return r.rt.StopPodSandbox(ctx, podSandboxID)
	})
}

func (r *limitedRuntime) RemovePodSandbox(ctx context.Context, podSandboxID string) error {
	return do(ctx, r.limiter, LaneChange, r.change.acquire, callTimeout, func(ctx context.Context) error {
		return r.rt.RemovePodSandbox(ctx, podSandboxID)
	})
}

func (r *limitedRuntime) PodSandboxStatus(ctx context.Context, podSandboxID string, verbose bool) (*runtimeapi.PodSandboxStatusResponse, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) (*runtimeapi.PodSandboxStatusResponse, error) {
		return r.rt.PodSandboxStatus(ctx, podSandboxID, verbose)
	})
}

func (r *limitedRuntime) ListPodSandbox(ctx context.Context, filter *runtimeapi.PodSandboxFilter) ([]*runtimeapi.PodSandbox, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) ([]*runtimeapi.PodSandbox, error) {
		return r.rt.ListPodSandbox(ctx, filter)
	})
}

func (r *limitedRuntime) CreateContainer(ctx context.Context, podSandboxID string, config *runtimeapi.ContainerConfig, sandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	return call(ctx, r.limiter, LaneChange, r.change.acquireAhead, callTimeout, func(ctx context.Context) (string, error) {
		return r.rt.CreateContainer(ctx, podSandboxID, config, sandboxConfig)
	})
}

func (r *limitedRuntime) StartContainer(ctx context.Context, containerID string) error {
	return do(ctx, r.limiter, LaneChange, r.change.acquireAhead, callTimeout, func(ctx context.Context) error {
		return r.rt.StartContainer(ctx, containerID)
	})
}

func (r *limitedRuntime) StopContainer(ctx context.Context, containerID string, timeout int64) error {
	deadline := func(ctx context.Context) (context.Context, context.CancelFunc) { return stopBound(ctx, timeout) }
	return do(ctx, r.limiter, LaneKill, r.takeKill, deadline, func(ctx context.Context) error {
		return r.rt.StopContainer(ctx, containerID, timeout)
	})
}

func (r *limitedRuntime) RemoveContainer(ctx context.Context, containerID string) error {
	return do(ctx, r.limiter, LaneChange, r.change.acquire, callTimeout, func(ctx context.Context) error {
		return r.rt.RemoveContainer(ctx, containerID)
	})
}

func (r *limitedRuntime) ListContainers(ctx context.Context, filter *runtimeapi.ContainerFilter) ([]*runtimeapi.Container, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) ([]*runtimeapi.Container, error) {
		return r.rt.ListContainers(ctx, filter)
	})
}

func (r *limitedRuntime) ContainerStatus(ctx context.Context, containerID string, verbose bool) (*runtimeapi.ContainerStatusResponse, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) (*runtimeapi.ContainerStatusResponse, error) {
		return r.rt.ContainerStatus(ctx, containerID, verbose)
	})
}

// ExecSync runs in the kill lane under ForKill (a preStop hook), else in
// the exec lane, counted against the share of the pod ForPod names (or,
// without one, of the container alone).
func (r *limitedRuntime) ExecSync(ctx context.Context, containerID string, cmd []string, timeout time.Duration) ([]byte, []byte, error) {
	type out struct{ stdout, stderr []byte }
	name, take := LaneKill, r.takeKill
	if info := infoOf(ctx); !info.kill {
		key := "pod/" + string(info.pod)
		if info.pod == "" {
			key = "container/" + containerID
		}
		name, take = LaneExec, func(ctx context.Context) (func(), error) { return r.exec.acquire(ctx, key) }
	}
	deadline := func(ctx context.Context) (context.Context, context.CancelFunc) { return execBound(ctx, timeout) }
	o, err := call(ctx, r.limiter, name, take, deadline, func(ctx context.Context) (out, error) {
		stdout, stderr, err := r.rt.ExecSync(ctx, containerID, cmd, timeout)
		return out{stdout, stderr}, err
	})
	return o.stdout, o.stderr, err
}

func (r *limitedRuntime) ListContainerStats(ctx context.Context, filter *runtimeapi.ContainerStatsFilter) ([]*runtimeapi.ContainerStats, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) ([]*runtimeapi.ContainerStats, error) {
		return r.rt.ListContainerStats(ctx, filter)
	})
}

func (r *limitedRuntime) ListPodSandboxStats(ctx context.Context, filter *runtimeapi.PodSandboxStatsFilter) ([]*runtimeapi.PodSandboxStats, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) ([]*runtimeapi.PodSandboxStats, error) {
		return r.rt.ListPodSandboxStats(ctx, filter)
	})
}

// The streaming calls are reads: they only hand out a URL.

func (r *limitedRuntime) Exec(ctx context.Context, req *runtimeapi.ExecRequest) (*runtimeapi.ExecResponse, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) (*runtimeapi.ExecResponse, error) {
		return r.rt.Exec(ctx, req)
	})
}

func (r *limitedRuntime) Attach(ctx context.Context, req *runtimeapi.AttachRequest) (*runtimeapi.AttachResponse, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) (*runtimeapi.AttachResponse, error) {
		return r.rt.Attach(ctx, req)
	})
}

func (r *limitedRuntime) PortForward(ctx context.Context, req *runtimeapi.PortForwardRequest) (*runtimeapi.PortForwardResponse, error) {
	return call(ctx, r.limiter, LaneRead, r.read.acquire, callTimeout, func(ctx context.Context) (*runtimeapi.PortForwardResponse, error) {
		return r.rt.PortForward(ctx, req)
	})
}

type limitedImages struct {
	images Images
	*limiter
}

func (i *limitedImages) ImageStatus(ctx context.Context, image *runtimeapi.ImageSpec, verbose bool) (*runtimeapi.ImageStatusResponse, error) {
	return call(ctx, i.limiter, LaneRead, i.read.acquire, callTimeout, func(ctx context.Context) (*runtimeapi.ImageStatusResponse, error) {
		return i.images.ImageStatus(ctx, image, verbose)
	})
}

// PullImage gets the pull deadline whatever the caller's context: a pull
// that hangs must give its slot back.
func (i *limitedImages) PullImage(ctx context.Context, image *runtimeapi.ImageSpec, auth *runtimeapi.AuthConfig, podSandboxConfig *runtimeapi.PodSandboxConfig) (string, error) {
	deadline := func(ctx context.Context) (context.Context, context.CancelFunc) {
		return context.WithTimeoutCause(ctx, i.pullDeadline, &PullDeadlineError{Image: image.GetImage(), Deadline: i.pullDeadline})
	}
	return call(ctx, i.limiter, LanePull, i.pull.acquire, deadline, func(ctx context.Context) (string, error) {
		ref, err := i.images.PullImage(ctx, image, auth, podSandboxConfig)
		if err != nil {
			if cause, ok := context.Cause(ctx).(*PullDeadlineError); ok {
				return "", cause
			}
		}
		return ref, err
	})
}

func (i *limitedImages) ImageFsInfo(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
	return call(ctx, i.limiter, LaneRead, i.read.acquire, callTimeout, func(ctx context.Context) (*runtimeapi.ImageFsInfoResponse, error) {
		return i.images.ImageFsInfo(ctx)
	})
}

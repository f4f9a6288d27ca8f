package cri

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// A CRI call says which pod it is for, and whether it is part of a kill,
// through its context: the signatures of the CRI's calls carry neither,
// and the limiter (Limit) needs both for an ExecSync, which may be a
// probe's, a postStart hook's or a preStop hook's.

type callKey struct{}

// callInfo is what a context says of its CRI calls.
type callInfo struct {
	pod  types.UID
	kill bool
}

func infoOf(ctx context.Context) callInfo {
	info, _ := ctx.Value(callKey{}).(callInfo)
	return info
}

// ForPod is ctx for CRI calls on behalf of pod uid: the limiter counts
// its ExecSync calls against that pod's share of the exec lane.
func ForPod(ctx context.Context, uid types.UID) context.Context {
	info := infoOf(ctx)
	info.pod = uid
	return context.WithValue(ctx, callKey{}, info)
}

// ForKill is ctx for the CRI calls of a kill (a preStop hook's ExecSync):
// they run in the kill lane, which waits for no exec, pull or other
// pod's call. The kill's grace period bounds them.
func ForKill(ctx context.Context) context.Context {
	info := infoOf(ctx)
	info.kill = true
	return context.WithValue(ctx, callKey{}, info)
}

// Deadlines of the CRI calls. The CRI client bounds most calls with its
// connection timeout, but not an ExecSync without a timeout (a hook's) nor
// PullImage; the limiter gives every call a deadline of its own, so that
// nothing waits for the runtime forever whoever the caller is.
const (
	// CallTimeout bounds a call whose context has no deadline: the
	// kubelet's runtimeRequestTimeout default. A StopContainer gets it on
	// top of its grace period.
	CallTimeout = 2 * time.Minute
	// ExecTimeoutMargin is what an ExecSync with a timeout (a probe's)
	// gets beyond it: the runtime kills the command at its timeout and
	// needs a moment to say so. The probe's deadline is its timeoutSeconds
	// plus this margin.
	ExecTimeoutMargin = 2 * time.Second
	// PostStartTimeout is a postStart hook's budget. The kubelet gives the
	// hook no timeout of its own ("TODO: pass a proper timeout value"):
	// it runs until it ends or the pod's sync is cancelled by a kill, and
	// so may hold a pod worker forever. podlife's ends at the latest after
	// the kubelet's runtimeRequestTimeout default, the bound of every
	// other runtime call the kubelet makes; a hook cut off there failed
	// (FailedPostStartHook: the container is killed and restarted as its
	// restart policy says).
	PostStartTimeout = 2 * time.Minute
)

// bound is ctx with deadline d from now, unless it has a deadline already
// (a preStop hook's grace period, a probe's timeout): the caller's budget
// wins.
func bound(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if _, ok := ctx.Deadline(); ok {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}

// execBound is an ExecSync's deadline: its timeout plus a margin, or when
// it has none (a hook), the caller's deadline or CallTimeout.
func execBound(ctx context.Context, timeout time.Duration) (context.Context, context.CancelFunc) {
	if timeout > 0 {
		return context.WithTimeout(ctx, timeout+ExecTimeoutMargin)
	}
	return bound(ctx, CallTimeout)
}

// stopBound is a StopContainer's deadline: its grace period plus
// CallTimeout, unless the caller has one.
func stopBound(ctx context.Context, grace int64) (context.Context, context.CancelFunc) {
	d := CallTimeout
	if grace > 0 && grace < int64((1<<62)/time.Second) {
		d += time.Duration(grace) * time.Second
	} else if grace > 0 {
		d = 1 << 62
	}
	return bound(ctx, d)
}

// PullDeadlineError is a pull cut off at the pull deadline (Lanes'
// PullDeadline, the agent's imagePullProgressDeadline): the CRI reports no
// progress of a pull, so the deadline bounds the whole pull.
type PullDeadlineError struct {
	Image    string
	Deadline time.Duration
}

func (e *PullDeadlineError) Error() string {
	return fmt.Sprintf("pull of image %q cancelled at the image pull progress deadline (%s)", e.Image, e.Deadline)
}

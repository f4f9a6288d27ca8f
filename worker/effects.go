package worker

import (
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Effect is one thing the engine must do after an input of the Core, in the
// manner of raft's Ready: the Core decides and records its effects as
// data; the shell (PodWorkers, or a model checker) collects them with
// TakeEffects and carries them out. The Core never calls back into its
// shell. An Effect is a plain value: it names what the shell holds (a
// waiter, a pod's sync context) and holds no handle itself.
type Effect struct {
	Kind EffectKind
	UID  types.UID
	// Delay is how long after the effect an ArmTimer timer fires (jitter
	// already applied).
	Delay time.Duration
	// Waiter is the kill completion channel a CloseChannel closes.
	Waiter WaiterID
}

// EffectKind says what an Effect asks for.
type EffectKind uint8

const (
	// RunLoop: start the pod's worker loop: call Next and, for each Work it
	// returns, the sync function and Done, until Next returns false. The
	// Core asks only when no loop of the pod runs.
	RunLoop EffectKind = iota + 1
	// ArmTimer: call Timer(UID) Delay from now, replacing the pod's
	// earlier timer.
	ArmTimer
	// StopTimer: drop the pod's timer.
	StopTimer
	// CloseChannel: close the kill completion channel registered as
	// Waiter: the pod terminated, or the kill cannot be kept. The Core asks
	// exactly once per waiter it was handed.
	CloseChannel
	// CancelSync: cancel the context of the pod's sync calls, so that its
	// sync in flight returns; the pod's next sync call gets a new one. The
	// Core asks only after it handed out a Work since the last CancelSync.
	CancelSync
)

var effectKindNames = [...]string{RunLoop: "RunLoop", ArmTimer: "ArmTimer", StopTimer: "StopTimer", CloseChannel: "CloseChannel", CancelSync: "CancelSync"}

func (k EffectKind) String() string {
	if int(k) < len(effectKindNames) && effectKindNames[k] != "" {
		return effectKindNames[k]
	}
	return "EffectKind(invalid)"
}

// TakeEffects appends the effects recorded since the last call, in order,
// to dst and forgets them.
func (c *Core) TakeEffects(dst []Effect) []Effect {
	dst = append(dst, c.effects...)
	c.effects = c.effects[:0]
	return dst
}

func (c *Core) emit(e Effect) { c.effects = append(c.effects, e) }

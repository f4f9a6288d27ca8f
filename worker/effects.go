package worker

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/types"
)

// Effect is one thing the engine must do after an input of the Core, in the
// manner of raft's Ready: the Core decides and records its effects as
// data; the shell (PodWorkers, or a model checker) collects them with
// TakeEffects and carries them out. The Core never calls back into its
// shell.
type Effect struct {
	Kind EffectKind
	UID  types.UID
	// Due is when an ArmTimer timer fires.
	Due time.Time
	// Ch is a CloseChannel kill completion channel.
	Ch chan<- struct{}
	// Cancel is a CancelSync context's cancel function.
	Cancel context.CancelFunc
}

// EffectKind says what an Effect asks for.
type EffectKind uint8

const (
	// RunLoop: start the pod's worker loop: call Next and, for each Work it
	// returns, the sync function and Done, until Next returns false. The
	// Core asks only when no loop of the pod runs.
	RunLoop EffectKind = iota + 1
	// ArmTimer: call Timer(UID) at Due, replacing the pod's earlier timer.
	ArmTimer
	// StopTimer: drop the pod's timer.
	StopTimer
	// CloseChannel: close the kill completion channel Ch: the pod
	// terminated, or the kill cannot be kept. The Core asks exactly once
	// per channel it was handed.
	CloseChannel
	// CancelSync: call Cancel, so that the pod's sync in flight returns.
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
	clear(c.effects) // drop the references to channels and contexts
	c.effects = c.effects[:0]
	return dst
}

func (c *Core) emit(e Effect) { c.effects = append(c.effects, e) }

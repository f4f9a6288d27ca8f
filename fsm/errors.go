package fsm

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/types"
)

// NoTransitionError: the table has no row for the event in the pod's state
// (only events the worker raises itself can hit this).
type NoTransitionError struct {
	Pod   types.UID
	State State
	Event Event
}

func (e *NoTransitionError) Error() string {
	return fmt.Sprintf("pod %s: no transition for %s in state %s", e.Pod, e.Event, e.State)
}

// GuardRejectedError: the table has rows for the event in the pod's state,
// but none of their guards holds.
type GuardRejectedError struct {
	Pod    types.UID
	State  State
	Event  Event
	Guards []string // IDs of the rows whose guards were false
}

func (e *GuardRejectedError) Error() string {
	return fmt.Sprintf("pod %s: %s in state %s rejected: no guard holds (%s)", e.Pod, e.Event, e.State, strings.Join(e.Guards, ", "))
}

// LooplabError: looplab/fsm disagreed with the generated table, which means
// the generated files are inconsistent. It wraps looplab's error.
type LooplabError struct {
	Row string
	Err error
}

func (e *LooplabError) Error() string { return fmt.Sprintf("looplab event %s: %v", e.Row, e.Err) }
func (e *LooplabError) Unwrap() error { return e.Err }

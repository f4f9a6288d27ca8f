// Package testevents records the Kubernetes events a component under test
// emits through its small recorder interface (Eventf), for the tests of
// the engine, the syncer and the node shutdown manager alike.
package testevents

import (
	"fmt"
	"sync"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Event is one recorded event.
type Event struct {
	UID     types.UID
	Pod     string // the pod's name
	Type    string // v1.EventTypeNormal or v1.EventTypeWarning
	Reason  string
	Message string
}

// Recorder records every event, in order; it is safe for concurrent use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
}

// Eventf records an event of pod.
func (r *Recorder) Eventf(pod *v1.Pod, eventType, reason, messageFmt string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, Event{UID: pod.UID, Pod: pod.Name, Type: eventType, Reason: reason, Message: fmt.Sprintf(messageFmt, args...)})
}

// Events returns the events recorded, in order.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// Reasons lists the reasons of uid's events, in order.
func (r *Recorder) Reasons(uid types.UID) []string {
	var out []string
	for _, e := range r.Events() {
		if e.UID == uid {
			out = append(out, e.Reason)
		}
	}
	return out
}

// Messages lists the messages of uid's events with the given reason.
func (r *Recorder) Messages(uid types.UID, reason string) []string {
	var out []string
	for _, e := range r.Events() {
		if e.UID == uid && e.Reason == reason {
			out = append(out, e.Message)
		}
	}
	return out
}

// Reset forgets the events recorded so far.
func (r *Recorder) Reset() {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = nil
}

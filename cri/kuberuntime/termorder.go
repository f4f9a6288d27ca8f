package kuberuntime

import (
	"context"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri"
)

// termOrder is the kubelet's termination ordering of a pod with sidecars
// (since 1.33): its regular containers stop first, all at once; each
// sidecar (restartable init container) waits for them and for every later
// sidecar to stop, so sidecars stop in the reverse of their start order.
// Each wait is bounded by the grace period that remains to the container.
type termOrder struct {
	mu sync.Mutex
	// left counts, by name, the instances still to stop; gone[name] is
	// closed once none is left.
	left map[string]int
	gone map[string]chan struct{}
	// after lists, by name, the channels a container waits on first.
	after map[string][]chan struct{}
}

// newTermOrder orders the stop of the named containers of pod, or returns
// nil when the pod has no sidecar: then nothing waits for anything.
func newTermOrder(pod *v1.Pod, stopping []string) *termOrder {
	if pod == nil || !hasSidecar(pod) {
		return nil
	}
	o := &termOrder{left: map[string]int{}, gone: map[string]chan struct{}{}, after: map[string][]chan struct{}{}}
	for _, name := range stopping {
		o.left[name]++
	}
	channel := func(name string) chan struct{} {
		ch := make(chan struct{})
		if o.left[name] == 0 {
			close(ch) // not stopping: nothing waits for it
		}
		o.gone[name] = ch
		return ch
	}
	var regular []chan struct{}
	for _, c := range pod.Spec.Containers {
		regular = append(regular, channel(c.Name))
	}
	var later chan struct{}
	for i := len(pod.Spec.InitContainers) - 1; i >= 0; i-- {
		c := &pod.Spec.InitContainers[i]
		ch := channel(c.Name)
		if !cri.IsSidecar(c) {
			continue
		}
		o.after[c.Name] = append(o.after[c.Name], regular...)
		if later != nil {
			o.after[c.Name] = append(o.after[c.Name], later)
		}
		later = ch
	}
	return o
}

// hasSidecar reports whether pod has a restartable init container.
func hasSidecar(pod *v1.Pod) bool {
	for i := range pod.Spec.InitContainers {
		if cri.IsSidecar(&pod.Spec.InitContainers[i]) {
			return true
		}
	}
	return false
}

// waitForTurn waits until the containers the named one stops after have
// stopped, for at most grace seconds, and returns how long it waited. It
// returns ctx's error once ctx ends.
func (o *termOrder) waitForTurn(ctx context.Context, name string, grace int64) (time.Duration, error) {
	start := time.Now()
	if o == nil || grace <= 0 {
		return 0, nil
	}
	limit := time.NewTimer(graceDuration(grace))
	defer limit.Stop()
	for _, ch := range o.after[name] {
		select {
		case <-ch:
		case <-limit.C:
			return time.Since(start), nil
		case <-ctx.Done():
			return time.Since(start), ctx.Err()
		}
	}
	return time.Since(start), nil
}

// stopped records that an instance of the named container stopped (or its
// stop ended otherwise: a failed stop holds no one back).
func (o *termOrder) stopped(name string) {
	if o == nil {
		return
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	n := o.left[name]
	if n == 0 {
		return
	}
	o.left[name] = n - 1
	if ch, ok := o.gone[name]; ok && n == 1 {
		close(ch)
	}
}

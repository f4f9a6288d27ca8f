package imagepull

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// Backoff is the kubelet's image pull back-off: after a failed pull of
// an image for a pod, the image is not pulled again for that pod until a
// delay has passed, which doubles with each failure up to a cap. A missing
// image is then neither hammered nor logged on every sync.
type Backoff struct {
	clock        clock.PassiveClock
	initial, max time.Duration

	mu sync.Mutex
	// entries is keyed by pod UID, then image.
	entries map[types.UID]map[string]*pullFailure
}

// pullFailure is the last failed pull of an image for a pod.
type pullFailure struct {
	at     time.Time
	delay  time.Duration
	reason string
}

// NewBackoff starts pulls' delays at initial, doubling to max.
func NewBackoff(clk clock.PassiveClock, initial, max time.Duration) *Backoff {
	return &Backoff{clock: clk, initial: initial, max: max, entries: map[types.UID]map[string]*pullFailure{}}
}

// Wait is how long the pod must still wait before it pulls image again,
// and why its last pull failed.
func (b *Backoff) Wait(uid types.UID, image string) (time.Duration, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.entries[uid][image]
	if f == nil {
		return 0, ""
	}
	return max(0, f.delay-b.clock.Since(f.at)), f.reason
}

// Failed records a failed pull and returns the delay before the next one.
func (b *Backoff) Failed(uid types.UID, image, reason string) time.Duration {
	b.mu.Lock()
	defer b.mu.Unlock()
	pod := b.entries[uid]
	if pod == nil {
		pod = map[string]*pullFailure{}
		b.entries[uid] = pod
	}
	delay := b.initial
	if f := pod[image]; f != nil {
		delay = min(2*f.delay, b.max)
	}
	pod[image] = &pullFailure{at: b.clock.Now(), delay: delay, reason: reason}
	return delay
}

// Succeeded clears the image's back-off for the pod.
func (b *Backoff) Succeeded(uid types.UID, image string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries[uid], image)
	if len(b.entries[uid]) == 0 {
		delete(b.entries, uid)
	}
}

// Forget drops the pod's back-off state.
func (b *Backoff) Forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, uid)
}

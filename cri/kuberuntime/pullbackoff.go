package kuberuntime

import (
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/status"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// pullBackoff is the kubelet's image pull back-off: after a failed pull of
// an image for a pod, the image is not pulled again for that pod until a
// delay has passed, which doubles with each failure up to a cap. A missing
// image is then neither hammered nor logged on every sync.
type pullBackoff struct {
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

func newPullBackoff(clk clock.PassiveClock, initial, max time.Duration) *pullBackoff {
	return &pullBackoff{clock: clk, initial: initial, max: max, entries: map[types.UID]map[string]*pullFailure{}}
}

// wait is how long the pod must still wait before it pulls image again,
// and why its last pull failed.
func (b *pullBackoff) wait(uid types.UID, image string) (time.Duration, string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	f := b.entries[uid][image]
	if f == nil {
		return 0, ""
	}
	return max(0, f.delay-b.clock.Since(f.at)), f.reason
}

// failed records a failed pull and returns the delay before the next one.
func (b *pullBackoff) failed(uid types.UID, image, reason string) time.Duration {
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

// succeeded clears the image's back-off for the pod.
func (b *pullBackoff) succeeded(uid types.UID, image string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries[uid], image)
	if len(b.entries[uid]) == 0 {
		delete(b.entries, uid)
	}
}

// forget drops the pod's back-off state.
func (b *pullBackoff) forget(uid types.UID) {
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.entries, uid)
}

// maxReasonLength bounds a runtime error's gist in a log line.
const maxReasonLength = 160

// shortReason is the gist of a runtime error for one log line: the gRPC
// status message without the "rpc error: code = ... desc =" wrapping, cut
// to its last three ": "-separated parts (containerd nests every cause:
// failed to pull and unpack image ...: failed to resolve reference ...:
// the cause) and to maxReasonLength characters.
func shortReason(err error) string {
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
	}
	if parts := strings.Split(msg, ": "); len(parts) > 3 {
		msg = strings.Join(parts[len(parts)-3:], ": ")
	}
	if r := []rune(msg); len(r) > maxReasonLength {
		msg = string(r[:maxReasonLength-3]) + "..."
	}
	return msg
}

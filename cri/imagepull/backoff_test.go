package imagepull

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"
)

// Each failure doubles the pod's delay for the image up to the cap; the
// delay runs down with the clock; a success or the pod's end clears it,
// and other pods and images are not held back.
func TestBackoff(t *testing.T) {
	clk := clocktesting.NewFakePassiveClock(time.Now())
	b := NewBackoff(clk, time.Second, 4*time.Second)
	const pod, other = types.UID("p"), types.UID("q")
	for i, want := range []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 4 * time.Second} {
		if got := b.Failed(pod, "img", "denied"); got != want {
			t.Errorf("failure %d: delay %v, want %v", i+1, got, want)
		}
	}
	clk.SetTime(clk.Now().Add(time.Second))
	if wait, reason := b.Wait(pod, "img"); wait != 3*time.Second || reason != "denied" {
		t.Errorf("Wait after 1 s: %v %q, want 3s \"denied\"", wait, reason)
	}
	if wait, _ := b.Wait(other, "img"); wait != 0 {
		t.Errorf("another pod waits %v", wait)
	}
	if wait, _ := b.Wait(pod, "other-img"); wait != 0 {
		t.Errorf("another image waits %v", wait)
	}
	b.Succeeded(pod, "img")
	if wait, _ := b.Wait(pod, "img"); wait != 0 {
		t.Errorf("after a success: waits %v", wait)
	}
	b.Failed(pod, "img", "denied")
	b.Forget(pod)
	if wait, _ := b.Wait(pod, "img"); wait != 0 || len(b.entries) != 0 {
		t.Errorf("after Forget: waits %v, %d entries", wait, len(b.entries))
	}
}

package manifests

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/podlife/podlife/kubetypes"
	"go.uber.org/goleak"
)

func TestRun(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t)
	e.write("a.yaml", podYAML("a", "i"))

	// Errors and changes go to one channel, so their order is checked too.
	const interval = 10 * time.Second
	events := make(chan string, 100)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.src.Run(ctx, interval, nil,
			func(c kubetypes.Change) { events <- show(c) },
			func(err error) { events <- "error " + err.Error() })
	}()
	defer func() {
		cancel()
		<-done
	}()

	expect := func(want ...string) {
		t.Helper()
		for _, w := range want {
			select {
			case got := <-events:
				if !strings.HasPrefix(got, w) {
					t.Fatalf("event %q, want %q", got, w)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("no event, want %q", w)
			}
		}
	}
	// tick fires the ticker and waits for that scan, then checks nothing
	// else came. Each tick edits a marker pod, so each scan ends with
	// "Add zz.yaml" (Adds come last, and zz sorts last) and is seen whole.
	marker := 0
	tick := func(want ...string) {
		t.Helper()
		marker++
		e.write("zz.yaml", podYAML("marker", fmt.Sprintf("img:%d", marker)))
		e.clk.Step(interval)
		if marker > 1 { // after errors and Removes, before Adds
			i := slices.IndexFunc(want, func(w string) bool {
				return !strings.HasPrefix(w, "error ") && !strings.HasPrefix(w, "Remove ")
			})
			if i < 0 {
				i = len(want)
			}
			want = slices.Insert(want, i, "Remove zz.yaml")
		}
		expect(append(want, "Add zz.yaml")...)
		select {
		case got := <-events:
			t.Fatalf("unexpected event %q", got)
		default:
		}
	}

	expect("Add a.yaml a-n1") // at once, without a tick

	// No scan before the interval: nothing comes of b until the tick.
	e.write("b.yaml", podYAML("b", "i"))
	e.clk.Step(interval - time.Second)
	select {
	case got := <-events:
		t.Fatalf("event %q before the interval", got)
	case <-time.After(100 * time.Millisecond):
	}
	tick("Add b.yaml b-n1")

	e.write("a.yaml", "spec: [")
	tick("error " + e.path("a.yaml") + ": invalid YAML")

	tick() // a is kept, and its error is not reported again

	e.remove("a.yaml")
	tick("Remove a.yaml a-n1")

	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return when its context ended")
	}
}

func TestRunCancelledScansNothing(t *testing.T) {
	defer goleak.VerifyNone(t)
	e := newEnv(t)
	e.write("a.yaml", podYAML("a", "i"))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	e.src.Run(ctx, time.Second, nil, func(c kubetypes.Change) { t.Errorf("handled %v after the context ended", show(c)) }, nil)
}

package worker

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestPodContext checks the sync context against context's contract: Done
// and Err before and after cancel (Done asked first or only afterwards), a
// second cancel changes nothing, and contexts derived from it (WithTimeout,
// WithCancel, context.AfterFunc) end with it; a stopped AfterFunc never
// runs.
func TestPodContext(t *testing.T) {
	const wait = 30 * time.Second // liveness bound only
	tests := []struct {
		name string
		run  func(t *testing.T, c *podContext)
	}{
		{"done before cancel", func(t *testing.T, c *podContext) {
			done := c.Done()
			if c.Err() != nil || isClosed(done) {
				t.Fatal("a live context reports done")
			}
			c.cancel()
			c.cancel()
			if !isClosed(done) || !errors.Is(c.Err(), context.Canceled) || c.Done() != done {
				t.Fatalf("after cancel: closed %v, err %v", isClosed(done), c.Err())
			}
		}},
		{"done asked only after cancel", func(t *testing.T, c *podContext) {
			c.cancel()
			if !isClosed(c.Done()) || !errors.Is(c.Err(), context.Canceled) {
				t.Fatal("a cancelled context is not done")
			}
		}},
		{"derived contexts end with it", func(t *testing.T, c *podContext) {
			timeout, stop1 := context.WithTimeout(c, time.Hour)
			defer stop1()
			child, stop2 := context.WithCancel(c)
			defer stop2()
			ran := make(chan struct{})
			context.AfterFunc(c, func() { close(ran) })
			c.cancel()
			for _, d := range []context.Context{timeout, child} {
				select {
				case <-d.Done():
				case <-time.After(wait):
					t.Fatal("a derived context did not end")
				}
				if !errors.Is(d.Err(), context.Canceled) {
					t.Fatalf("derived context's error %v", d.Err())
				}
			}
			select {
			case <-ran:
			case <-time.After(wait):
				t.Fatal("an AfterFunc did not run")
			}
		}},
		{"a derived context cancelled first unregisters", func(t *testing.T, c *podContext) {
			child, cancel := context.WithCancel(c)
			cancel()
			<-child.Done()
			c.mu.Lock()
			n := len(c.afters)
			c.mu.Unlock()
			if n != 0 {
				t.Fatalf("%d functions still registered after the child ended", n)
			}
		}},
		{"a stopped AfterFunc is not run by cancel", func(t *testing.T, c *podContext) {
			stop := c.AfterFunc(func() { t.Error("a stopped AfterFunc ran") })
			if !stop() || stop() {
				t.Fatal("stop: want true once, then false")
			}
			c.mu.Lock()
			n := len(c.afters)
			c.mu.Unlock()
			if n != 0 {
				t.Fatalf("%d functions still registered after stop", n) // cancel runs exactly the registered ones
			}
			c.cancel()
			ran := make(chan struct{})
			if late := c.AfterFunc(func() { close(ran) }); late() {
				t.Fatal("stop of an AfterFunc registered after cancel reported it stopped")
			}
			select {
			case <-ran: // registered after cancel: runs at once
			case <-time.After(wait):
				t.Fatal("an AfterFunc registered after cancel did not run")
			}
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.run(t, &podContext{}) })
	}
}

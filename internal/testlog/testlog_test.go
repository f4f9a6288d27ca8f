package testlog

import (
	"sync"
	"testing"
)

func TestBufferConcurrentWritesAndQueries(t *testing.T) {
	log, buf := New()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() { log.Info("hello", "n", i) })
	}
	wg.Wait()
	if got := len(buf.Lines("msg=hello")); got != 8 {
		t.Fatalf("%d hello lines, want 8:\n%s", got, buf)
	}
	if got := buf.Lines("msg=hello", "n=3"); len(got) != 1 {
		t.Fatalf("lines with n=3: %q", got)
	}
	if tail := buf.Tail(2); len(tail) == 0 || tail == buf.String() {
		t.Fatalf("Tail(2) = %q", tail)
	}
}

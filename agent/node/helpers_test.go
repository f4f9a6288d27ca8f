package node

import (
	"context"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/wait"
)

// pollTimeout is generous: the machine is small and shared.
const pollTimeout = 30 * time.Second

// eventually polls cond until it holds or pollTimeout passes.
func eventually(t *testing.T, what string, cond func() (bool, error)) {
	t.Helper()
	var lastErr error
	err := wait.PollUntilContextTimeout(context.Background(), 50*time.Millisecond, pollTimeout, true, func(context.Context) (bool, error) {
		ok, err := cond()
		lastErr = err
		return ok, nil
	})
	if err != nil {
		t.Fatalf("%s: not within %v (last error: %v)", what, pollTimeout, lastErr)
	}
}

// testLogger writes the Manager's logs to the test's log.
func testLogger(t *testing.T) *slog.Logger {
	return slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Helper()
	w.t.Log(string(p))
	return len(p), nil
}

// runManager starts a Manager for cfg and stops it, waiting for Run to
// return, when the test ends (or when the returned stop is called).
func runManager(t *testing.T, cfg Config) (m *Manager, stop func()) {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = testLogger(t)
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		m.Run(ctx)
	}()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
	t.Cleanup(stop)
	return m, stop
}

// condition returns node's condition of type ct, or nil.
func condition(node *v1.Node, ct v1.NodeConditionType) *v1.NodeCondition {
	for i := range node.Status.Conditions {
		if node.Status.Conditions[i].Type == ct {
			return &node.Status.Conditions[i]
		}
	}
	return nil
}

// outageProxy forwards TCP connections to the apiserver until it is set
// down: then it cuts the open connections and stops listening (connection
// refused), as an apiserver that went away, until it is set up again on the
// same address.
type outageProxy struct {
	t      *testing.T
	addr   string
	target string

	mu    sync.Mutex
	ln    net.Listener // guarded by mu; nil while down
	conns map[net.Conn]struct{}
	wg    sync.WaitGroup
}

func startOutageProxy(t *testing.T, target string) *outageProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &outageProxy{t: t, addr: ln.Addr().String(), target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Go(func() { p.serve(ln) })
	t.Cleanup(func() {
		p.setDown(true)
		p.wg.Wait()
	})
	return p
}

func (p *outageProxy) serve(ln net.Listener) {
	for {
		in, err := ln.Accept()
		if err != nil {
			return
		}
		out, err := net.Dial("tcp", p.target)
		if err != nil {
			in.Close()
			continue
		}
		p.mu.Lock()
		p.conns[in], p.conns[out] = struct{}{}, struct{}{}
		p.mu.Unlock()
		pipe := func(dst, src net.Conn) {
			_, _ = io.Copy(dst, src)
			dst.Close()
			src.Close()
		}
		p.wg.Go(func() { pipe(out, in) })
		p.wg.Go(func() { pipe(in, out) })
	}
}

// setDown starts (true) or ends (false) the outage.
func (p *outageProxy) setDown(down bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if down {
		if p.ln != nil {
			p.ln.Close()
			p.ln = nil
		}
		for c := range p.conns {
			c.Close()
		}
		clear(p.conns)
		return
	}
	if p.ln != nil {
		return
	}
	ln, err := net.Listen("tcp", p.addr)
	if err != nil {
		p.t.Fatalf("the proxy cannot listen on %s again: %v", p.addr, err)
	}
	p.ln = ln
	p.wg.Go(func() { p.serve(ln) })
}

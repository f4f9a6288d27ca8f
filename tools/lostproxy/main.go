// Command lostproxy is a TCP proxy that can cut a node off from the API
// server, for tools/lost-and-found.sh: the node's kubeconfig names the
// proxy, the proxy forwards to the API server, and a signal drops or
// passes the traffic.
//
//	lostproxy -listen 127.0.0.1:0 -target 127.0.0.1:6443 -addr-file FILE
//
// SIGUSR1 drops: bytes already read are held, nothing more is forwarded in
// either direction and new connections are accepted but not dialled on, so
// the kernel's buffers fill and both ends see what a dropped link looks
// like (no reset, no FIN: requests hang until their own timeouts). SIGUSR2
// passes again: held bytes are delivered, as TCP retransmission would
// deliver them once the link is back, and connections either end gave up
// on are closed. Unlike a firewall rule it needs no privilege and touches
// nothing but its own sockets (the machine's other clusters keep working).
//
// The kubelet's own tests cut the node off in a real network (the e2e
// framework's network partition, test/e2e/framework/network: an iptables
// DROP rule on the node); this is that rule for one node's API traffic.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"os"
	"os/signal"
	"sync"
	"syscall"
)

// gate is the link's state: open (passing) or closed (dropping). wait
// returns once the gate is open or ctx is done.
type gate struct {
	mu      sync.Mutex
	open    chan struct{} // closed while passing
	passing bool
	held    int // copies waiting for the gate: a seam for tests
}

func newGate() *gate {
	g := &gate{open: make(chan struct{}), passing: true}
	close(g.open)
	return g
}

func (g *gate) drop() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.passing {
		g.passing = false
		g.open = make(chan struct{})
	}
}

func (g *gate) pass() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.passing {
		g.passing = true
		close(g.open)
	}
}

// heldCount is how many copies now wait for the gate.
func (g *gate) heldCount() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

func (g *gate) wait(ctx context.Context) error {
	g.mu.Lock()
	ch, held := g.open, !g.passing
	if held {
		g.held++
	}
	g.mu.Unlock()
	select {
	case <-ch:
	case <-ctx.Done():
	}
	if held {
		g.mu.Lock()
		g.held--
		g.mu.Unlock()
	}
	return ctx.Err()
}

// proxy forwards each connection accepted on ln to target through g.
type proxy struct {
	target string
	g      *gate
}

func (p *proxy) serve(ctx context.Context, ln net.Listener) error {
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go p.handle(ctx, c)
	}
}

func (p *proxy) handle(ctx context.Context, client net.Conn) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer client.Close()
	// A connection made while dropping waits as its SYN would be
	// retransmitted: the dial happens once the link is back.
	if err := p.g.wait(ctx); err != nil {
		return
	}
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		log.Printf("dial %s: %v", p.target, err)
		return
	}
	defer server.Close()
	done := make(chan struct{}, 2)
	go func() { p.copy(ctx, server, client); done <- struct{}{} }()
	go func() { p.copy(ctx, client, server); done <- struct{}{} }()
	// Either direction's end ends the connection: a half-close is not
	// something the API clients use.
	<-done
	cancel()
}

// copy forwards src to dst, each chunk through the gate.
func (p *proxy) copy(ctx context.Context, dst, src net.Conn) {
	stop := context.AfterFunc(ctx, func() {
		src.Close()
		dst.Close()
	})
	defer stop()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if p.g.wait(ctx) != nil {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			if !errors.Is(err, io.EOF) && ctx.Err() == nil {
				log.Printf("read: %v", err)
			}
			return
		}
	}
}

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	target := flag.String("target", "", "host:port to forward to (the API server)")
	addrFile := flag.String("addr-file", "", "file the listening address is written to once listening")
	flag.Parse()
	if *target == "" {
		fmt.Fprintln(os.Stderr, "lostproxy: -target is required (host:port of the API server)")
		os.Exit(2)
	}
	if _, _, err := net.SplitHostPort(*target); err != nil {
		fmt.Fprintf(os.Stderr, "lostproxy: -target %q is not host:port: %v\n", *target, err)
		os.Exit(2)
	}
	log.SetPrefix("lostproxy: ")
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatalf("listen: %v", err)
	}
	context.AfterFunc(ctx, func() { ln.Close() })
	p := &proxy{target: *target, g: newGate()}
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGUSR1, syscall.SIGUSR2)
	go func() {
		for s := range sigs {
			if s == syscall.SIGUSR1 {
				p.g.drop()
				log.Printf("dropping")
			} else {
				p.g.pass()
				log.Printf("passing")
			}
		}
	}()
	if *addrFile != "" {
		tmp := *addrFile + ".tmp"
		if err := os.WriteFile(tmp, []byte(ln.Addr().String()+"\n"), 0o644); err != nil {
			log.Fatalf("write -addr-file: %v", err)
		}
		if err := os.Rename(tmp, *addrFile); err != nil {
			log.Fatalf("write -addr-file: %v", err)
		}
	}
	log.Printf("listening on %s, forwarding to %s", ln.Addr(), *target)
	if err := p.serve(ctx, ln); err != nil {
		log.Fatalf("accept: %v", err)
	}
}

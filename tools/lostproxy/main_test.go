package main

import (
	"context"
	"io"
	"net"
	"testing"
	"time"
)

// echoServer answers every connection by echoing what it reads.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() { defer c.Close(); io.Copy(c, c) }()
		}
	}()
	return ln.Addr().String()
}

// startProxy runs a proxy to target and returns it and its address.
func startProxy(t *testing.T, target string) (*proxy, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(func() { cancel(); ln.Close() })
	p := &proxy{target: target, g: newGate()}
	go p.serve(ctx, ln)
	return p, ln.Addr().String()
}

// waitHeld waits until n copies or dials wait for the gate.
func waitHeld(t *testing.T, g *gate, n int) {
	t.Helper()
	for g.heldCount() < n {
		time.Sleep(time.Millisecond)
	}
}

func roundTrip(t *testing.T, c net.Conn, msg string) {
	t.Helper()
	if _, err := c.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(c, got); err != nil {
		t.Fatal(err)
	}
	if string(got) != msg {
		t.Fatalf("echo: got %q, want %q", got, msg)
	}
}

func TestProxy(t *testing.T) {
	for _, tc := range []struct {
		name string
		// dropBeforeDial: the connection is made while dropping (its dial
		// waits); otherwise an established connection's bytes wait.
		dropBeforeDial bool
	}{
		{"established connection", false},
		{"new connection", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, addr := startProxy(t, echoServer(t))
			var c net.Conn
			var err error
			if !tc.dropBeforeDial {
				if c, err = net.Dial("tcp", addr); err != nil {
					t.Fatal(err)
				}
				roundTrip(t, c, "passing")
			}
			p.g.drop()
			if tc.dropBeforeDial {
				if c, err = net.Dial("tcp", addr); err != nil {
					t.Fatal(err)
				}
			}
			defer c.Close()
			if _, err := c.Write([]byte("held")); err != nil {
				t.Fatal(err)
			}
			waitHeld(t, p.g, 1)
			// Held at the gate: nothing can have come back.
			c.SetReadDeadline(time.Now())
			if n, _ := c.Read(make([]byte, 8)); n != 0 {
				t.Fatalf("read %d bytes while dropping", n)
			}
			c.SetReadDeadline(time.Time{})
			p.g.pass()
			got := make([]byte, 4)
			if _, err := io.ReadFull(c, got); err != nil || string(got) != "held" {
				t.Fatalf("after pass: got %q, %v; want the held bytes", got, err)
			}
			roundTrip(t, c, "passing again")
			if n := p.g.heldCount(); n != 0 {
				t.Fatalf("%d copies still held after pass", n)
			}
		})
	}
}

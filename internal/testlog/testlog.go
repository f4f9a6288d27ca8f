// Package testlog is a log sink for tests: the code under test writes to it
// from its goroutines while the test reads what was written.
package testlog

import (
	"bytes"
	"log/slog"
	"strings"
	"sync"
)

// Buffer is an io.Writer safe for concurrent use.
type Buffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

// New returns a text logger that writes to a new Buffer.
func New() (*slog.Logger, *Buffer) {
	b := &Buffer{}
	return slog.New(slog.NewTextHandler(b, nil)), b
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// Lines returns the lines that contain every one of parts.
func (b *Buffer) Lines(parts ...string) []string {
	var out []string
	for line := range strings.Lines(b.String()) {
		match := true
		for _, p := range parts {
			match = match && strings.Contains(line, p)
		}
		if match {
			out = append(out, strings.TrimSuffix(line, "\n"))
		}
	}
	return out
}

// Tail is the last n lines.
func (b *Buffer) Tail(n int) string {
	lines := strings.SplitAfter(b.String(), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "")
}

package logs

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// rec is one CRI log record at second sec of 2030-01-02T03:04.
func rec(sec int, stream, tag, content string) string {
	return time.Date(2030, 1, 2, 3, 4, sec, 0, time.UTC).Format(time.RFC3339Nano) + " " + stream + " " + tag + " " + content + "\n"
}

func at(sec int) time.Time { return time.Date(2030, 1, 2, 3, 4, sec, 0, time.UTC) }

// writeLogFiles writes the log 0.log and its rotated files (oldest first,
// named with increasing times) in a new directory, and returns 0.log.
func writeLogFiles(t *testing.T, current string, rotated ...string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "0.log")
	for i, content := range rotated {
		name := path + "." + time.Date(2030, 1, 2, 3, 4, i, 0, time.UTC).Format(rotatedLogTime)
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(path, []byte(current), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func exited(context.Context) (bool, error) { return false, nil }

// WriteLog decodes the CRI format as the kubelet's /containerLogs: tags
// dropped, partial records joined into their line (per stream), the lines
// of rotated files first in their order, tail counted in lines, since on
// a line's first record, a byte limit cutting a line.
func TestWriteLog(t *testing.T) {
	all := Options{TailLines: -1}
	tests := []struct {
		name    string
		current string
		rotated []string
		opts    Options
		want    string
	}{
		{"stdout and stderr, tags dropped", rec(1, "stdout", "F", "out") + rec(2, "stderr", "F:x", "err"), nil, all, "out\nerr\n"},
		{"not CRI lines skipped", "garbage\n" + rec(1, "stdout", "F", "a") + "2030 stdin F b\n", nil, all, "a\n"},
		{"partial records joined", rec(1, "stdout", "P", "ab") + rec(1, "stdout", "P", "cd") + rec(2, "stdout", "F", "ef"), nil, all, "abcdef\n"},
		{"partial records joined per stream", rec(1, "stdout", "P", "o1") + rec(2, "stderr", "F", "e") + rec(3, "stdout", "F", "o2"), nil, all, "e\no1o2\n"},
		{"a line the output ended inside of", rec(1, "stdout", "F", "a") + rec(2, "stdout", "P", "no newline"), nil, all, "a\nno newline"},
		{"empty lines", rec(1, "stdout", "F", "") + rec(2, "stdout", "F", "x"), nil, all, "\nx\n"},
		{"rotated files in order", rec(5, "stdout", "F", "c"), []string{rec(1, "stdout", "F", "a"), rec(3, "stdout", "F", "b")}, all, "a\nb\nc\n"},
		{"a line across a rotation", rec(5, "stdout", "F", "end"), []string{rec(1, "stdout", "P", "start-")}, all, "start-end\n"},
		{"tail", rec(3, "stdout", "F", "c") + rec(4, "stdout", "F", "d"), []string{rec(1, "stdout", "F", "a") + rec(2, "stdout", "F", "b")}, Options{TailLines: 3}, "b\nc\nd\n"},
		{"tail counts joined lines", rec(1, "stdout", "F", "a") + rec(2, "stdout", "P", "b") + rec(3, "stdout", "F", "c"), nil, Options{TailLines: 1}, "bc\n"},
		{"tail 0", rec(1, "stdout", "F", "a"), nil, Options{TailLines: 0}, ""},
		{"tail beyond the log", rec(1, "stdout", "F", "a"), nil, Options{TailLines: 10}, "a\n"},
		{"since", rec(1, "stdout", "F", "a") + rec(2, "stdout", "F", "b") + rec(3, "stdout", "F", "c"), nil, Options{TailLines: -1, Since: at(2)}, "b\nc\n"},
		{"since on a line's first record", rec(1, "stdout", "P", "a") + rec(3, "stdout", "F", "b"), nil, Options{TailLines: -1, Since: at(2)}, ""},
		{"timestamps", rec(1, "stdout", "P", "a") + rec(2, "stdout", "F", "b"), nil, Options{TailLines: -1, Timestamps: true}, "2030-01-02T03:04:01Z ab\n"},
		{"limit bytes cuts a line", rec(1, "stdout", "F", "abc") + rec(2, "stdout", "F", "def"), nil, Options{TailLines: -1, LimitBytes: 6}, "abc\nde"},
		{"limit bytes beyond the log", rec(1, "stdout", "F", "abc"), nil, Options{TailLines: -1, LimitBytes: 100}, "abc\n"},
		{"a last record without its newline", rec(1, "stdout", "F", "a") + strings.TrimSuffix(rec(2, "stdout", "F", "b"), "\n"), nil, all, "a\nb\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLogFiles(t, tt.current, tt.rotated...)
			var out bytes.Buffer
			if err := Write(t.Context(), path, tt.opts, &out, exited); err != nil {
				t.Fatalf("WriteLog: %v", err)
			}
			if out.String() != tt.want {
				t.Errorf("WriteLog wrote %q, want %q", out.String(), tt.want)
			}
		})
	}
}

// A symbolic link in the log's place, or among its rotated files, is not
// followed: the runtime's directory could hold one planted there.
func TestWriteLogRefusesSymlinks(t *testing.T) {
	secret := filepath.Join(t.TempDir(), "secret")
	if err := os.WriteFile(secret, []byte(rec(1, "stdout", "F", "secret")), 0o600); err != nil {
		t.Fatal(err)
	}
	path := writeLogFiles(t, rec(2, "stdout", "F", "mine"))
	if err := os.Symlink(secret, path+"."+at(0).Format(rotatedLogTime)); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := Write(t.Context(), path, Options{TailLines: -1}, &out, exited); err != nil {
		t.Fatalf("WriteLog: %v", err)
	}
	if out.String() != "mine\n" {
		t.Errorf("WriteLog wrote %q, want only the log's own line", out.String())
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(secret, path); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	if err := Write(t.Context(), path, Options{TailLines: -1}, &out, exited); err == nil || out.Len() > 0 {
		t.Errorf("WriteLog of a symbolic link wrote %q, err %v; want an error", out.String(), err)
	}
}

// syncBuffer is a bytes.Buffer a follow writes to while the test reads it.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// A follow reads what is appended, a record written in two pieces once
// whole, the new file after a rotation (the old one to its end first),
// and ends when the container has exited, with what it wrote last.
func TestWriteLogFollow(t *testing.T) {
	path := writeLogFiles(t, rec(1, "stdout", "F", "one"))
	var alive sync.Mutex
	running := true
	isRunning := func(context.Context) (bool, error) {
		alive.Lock()
		defer alive.Unlock()
		return running, nil
	}
	var out syncBuffer
	done := make(chan error, 1)
	go func() { done <- Write(t.Context(), path, Options{TailLines: -1, Follow: true}, &out, isRunning) }()

	appendLog := func(p, s string) {
		f, err := os.OpenFile(p, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := f.WriteString(s); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(want string) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for out.String() != want {
			if time.Now().After(deadline) {
				t.Fatalf("follow wrote %q, want %q", out.String(), want)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	waitFor("one\n")
	r := rec(2, "stdout", "F", "two")
	appendLog(path, r[:10])
	time.Sleep(2 * logFollowPoll)
	appendLog(path, r[10:])
	waitFor("one\ntwo\n")

	// A rotation: the writer still appends to the old file until the
	// runtime reopens the log.
	rotated := path + "." + at(0).Format(rotatedLogTime)
	if err := os.Rename(path, rotated); err != nil {
		t.Fatal(err)
	}
	appendLog(rotated, rec(3, "stdout", "F", "three"))
	if err := os.WriteFile(path, []byte(rec(4, "stdout", "F", "four")), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("one\ntwo\nthree\nfour\n")

	appendLog(path, rec(5, "stdout", "F", "last"))
	alive.Lock()
	running = false
	alive.Unlock()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("WriteLog: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("follow did not end after the container exited")
	}
	if got, want := out.String(), "one\ntwo\nthree\nfour\nlast\n"; got != want {
		t.Errorf("follow wrote %q, want %q", got, want)
	}
}

// A rotated file the rotation deleted between its listing and its
// opening is skipped: the read goes on with the next.
func TestOpenRotatedFileGone(t *testing.T) {
	path := writeLogFiles(t, rec(2, "stdout", "F", "cur"), rec(1, "stdout", "F", "old"))
	cur, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	rotated, err := rotatedLogs(path)
	if err != nil || len(rotated) != 1 {
		t.Fatalf("rotated logs %v, %v; want one", rotated, err)
	}
	files, err := openRotated([]string{path + ".20300102-030359", rotated[0], path}, cur)
	for _, f := range files {
		f.Close()
	}
	if err != nil || len(files) != 1 || files[0].Name() != rotated[0] {
		t.Errorf("openRotated: %d files, %v; want only the rotated file that exists, not the current one", len(files), err)
	}
}

package logs

import (
	"bufio"
	"bytes"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"testing/iotest"
)

// Lines longer than maxJoinedLine: written whole, as they come, in pieces
// that a tail counts one by one, the timestamp on the first alone; a line
// that has no record header in its first maxRecordHeader bytes is no
// record.
func TestWriteLogLongLines(t *testing.T) {
	long := strings.Repeat("x", 2*maxJoinedLine+100)
	split := func(stream, s string) string { // 16 KiB records, the last full
		var b strings.Builder
		for len(s) > 16<<10 {
			b.WriteString(rec(1, stream, "P", s[:16<<10]))
			s = s[16<<10:]
		}
		b.WriteString(rec(1, stream, "F", s))
		return b.String()
	}
	tests := []struct {
		name string
		log  string
		opts Options
		want string
	}{
		{"one record", rec(1, "stdout", "F", long), Options{TailLines: -1}, long + "\n"},
		{"16 KiB records", split("stdout", long), Options{TailLines: -1}, long + "\n"},
		{"timestamped once", rec(1, "stdout", "F", long), Options{TailLines: -1, Timestamps: true}, "2030-01-02T03:04:01Z " + long + "\n"},
		{"a tail counts its pieces", rec(0, "stdout", "F", "before") + rec(1, "stdout", "F", long), Options{TailLines: 1},
			long[2*maxJoinedLine:] + "\n"},
		{"a tail of all its pieces", rec(0, "stdout", "F", "before") + rec(1, "stdout", "F", long), Options{TailLines: 3}, long + "\n"},
		{"a piece goes before a line of the other stream", rec(1, "stdout", "P", long) + rec(2, "stderr", "F", "err") + rec(3, "stdout", "F", "end"),
			Options{TailLines: -1}, long[:2*maxJoinedLine] + "err\n" + long[2*maxJoinedLine:] + "end\n"},
		{"limit bytes", rec(1, "stdout", "F", long), Options{TailLines: -1, LimitBytes: 10}, long[:10]},
		{"a header too long is no record", rec(1, "stdout", strings.Repeat("F", maxRecordHeader), "tagged") + rec(2, "stdout", "F", "ok"),
			Options{TailLines: -1}, "ok\n"},
		{"a long line without a header", strings.Repeat("junk ", maxJoinedLine) + "\n" + rec(2, "stdout", "F", "ok"), Options{TailLines: -1}, "ok\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := writeLogFiles(t, tt.log)
			var out bytes.Buffer
			if err := Write(t.Context(), path, tt.opts, &out, exited); err != nil {
				t.Fatalf("WriteLog: %v", err)
			}
			if out.String() != tt.want {
				t.Errorf("WriteLog wrote %d bytes (%.40q...), want %d (%.40q...)", out.Len(), out.String(), len(tt.want), tt.want)
			}
		})
	}
}

// However the files' bytes come in reads, one at a time or all at once,
// the output is the same: a header, a record or a line cut by a read goes
// on in the next.
func TestReadCutAnywhere(t *testing.T) {
	log, err := os.ReadFile(filepath.Join("testdata", "mixed.log"))
	if err != nil {
		t.Fatal(err)
	}
	read := func(r io.Reader) string {
		var out bytes.Buffer
		lr := newLogReader(Options{TailLines: -1, Timestamps: true}, &out)
		if _, err := lr.readAll(r); err != nil {
			t.Fatal(err)
		}
		if err := lr.end(); err != nil {
			t.Fatal(err)
		}
		return out.String()
	}
	whole := read(bytes.NewReader(log))
	if want, err := os.ReadFile(filepath.Join("testdata", "mixed.out")); err != nil || whole != string(want) {
		t.Fatalf("read whole:\n%s\nwant (testdata/mixed.out, %v):\n%s", whole, err, want)
	}
	if got := read(iotest.OneByteReader(bytes.NewReader(log))); got != whole {
		t.Errorf("read a byte at a time:\n%s\nwant:\n%s", got, whole)
	}
	if got := read(iotest.HalfReader(bufio.NewReaderSize(bytes.NewReader(log), 16))); got != whole {
		t.Errorf("read in halves:\n%s\nwant:\n%s", got, whole)
	}
}

// hugeLog writes a log of one 64 MiB line after a short one, as one
// record (a runtime that does not split lines) or in 16 KiB records, and
// returns its path.
func hugeLog(tb testing.TB, split bool) string {
	tb.Helper()
	const size = 64 << 20
	path := filepath.Join(tb.TempDir(), "0.log")
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	chunk := bytes.Repeat([]byte("x"), 16<<10)
	_, _ = w.WriteString(rec(0, "stdout", "F", "first"))
	if !split {
		_, _ = w.WriteString(strings.TrimSuffix(rec(1, "stdout", "F", ""), "\n"))
	}
	for n := 0; n < size; n += len(chunk) {
		if split {
			tag := "P"
			if n+len(chunk) >= size {
				tag = "F"
			}
			_, _ = w.WriteString(strings.TrimSuffix(rec(1, "stdout", tag, ""), "\n"))
		}
		_, _ = w.Write(chunk)
		if split {
			_ = w.WriteByte('\n')
		}
	}
	if !split {
		_ = w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
	return path
}

// countingWriter counts what is written to it, and keeps its first bytes.
type countingWriter struct {
	n    int64
	head []byte
}

func (w *countingWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	if len(w.head) < 16 {
		w.head = append(w.head, p[:min(len(p), 16-len(w.head))]...)
	}
	return len(p), nil
}

// A 64 MiB line, one record or 16 KiB ones, is read with bounded memory
// whatever is asked of it: less than 1 MiB allocated (a structural bound:
// the line is 64 times that), to write it all, its first 10 bytes, the
// last line (a tail's two passes), or its timestamped pieces.
func TestWriteLogHugeLineBoundedMemory(t *testing.T) {
	for _, split := range []bool{false, true} {
		path := hugeLog(t, split)
		for _, tc := range []struct {
			name      string
			opts      Options
			wantBytes int64
			wantHead  string
		}{
			{"all", Options{TailLines: -1}, 6 + 64<<20 + 1, "first\nxxxxxxxxxx"},
			{"limitBytes 10", Options{TailLines: -1, LimitBytes: 10}, 10, "first\nxxxx"},
			{"tailLines 1", Options{TailLines: 1}, maxJoinedLine + 1, "xxxxxxxxxxxxxxxx"},
			{"timestamps", Options{TailLines: -1, Timestamps: true}, 2*21 + 6 + 64<<20 + 1, "2030-01-02T03:04"},
		} {
			name := tc.name + map[bool]string{false: ", one record", true: ", 16 KiB records"}[split]
			t.Run(name, func(t *testing.T) {
				var out countingWriter
				var err error
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				err = Write(t.Context(), path, tc.opts, &out, exited)
				runtime.ReadMemStats(&after)
				if err != nil {
					t.Fatal(err)
				}
				alloc := after.TotalAlloc - before.TotalAlloc
				t.Logf("%d bytes written, %d bytes allocated", out.n, alloc)
				if alloc >= 1<<20 {
					t.Errorf("reading a 64 MiB line allocated %d bytes, want < 1 MiB", alloc)
				}
				if out.n != tc.wantBytes || string(out.head) != tc.wantHead {
					t.Errorf("wrote %d bytes starting %q, want %d starting %q", out.n, out.head, tc.wantBytes, tc.wantHead)
				}
			})
		}
	}
}

// BenchmarkWriteLogHugeLine reads the 64 MiB line of one record to return
// its first 10 bytes: allocs/op and B/op are what a request costs.
func BenchmarkWriteLogHugeLine(b *testing.B) {
	path := hugeLog(b, false)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(b.Context(), path, Options{TailLines: -1, LimitBytes: 10}, io.Discard, exited); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWriteLogHugeLineTail tails the 64 MiB line: the two passes
// read it all twice.
func BenchmarkWriteLogHugeLineTail(b *testing.B) {
	path := hugeLog(b, false)
	b.ReportAllocs()
	for b.Loop() {
		if err := Write(b.Context(), path, Options{TailLines: 1}, io.Discard, exited); err != nil {
			b.Fatal(err)
		}
	}
}

package logs

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/podlife/podlife/internal/crifake"
)

// The log's tail: the last 80 records' content, at most its last 2 KiB,
// partial records joined, lines that are no CRI record skipped; read from
// the end of a log of any size.
func TestReadLogTail(t *testing.T) {
	line := func(i int) string {
		return fmt.Sprintf("2030-01-02T03:04:05.%09dZ stdout F line %d\n", i, i)
	}
	lines := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			b.WriteString(line(i))
		}
		return b.String()
	}
	contents := func(from, to int) string {
		var b strings.Builder
		for i := from; i < to; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.String()
	}
	big := strings.Repeat("y", 3000)
	for _, tc := range []struct {
		name, log, want string
	}{
		{"a few lines", lines(0, 3), contents(0, 3)},
		{"the last 80 lines", lines(0, 200), contents(120, 200)},
		{"the last 80 lines of a large log", strings.Repeat("2030-01-02T03:04:05Z stdout F "+strings.Repeat("z", 100)+"\n", 10000) + lines(0, 80), contents(0, 80)},
		{"the last 2 KiB", "2030-01-02T03:04:05Z stderr F " + big + "\n", (big + "\n")[3001-2048:]},
		{"partial records", "2030-01-02T03:04:05Z stdout P abc\n2030-01-02T03:04:05Z stdout F def\n", "abcdef\n"},
		{"tags", "2030-01-02T03:04:05Z stdout F:x abc\n", "abc\n"},
		{"not CRI lines", "garbage\n2030-01-02T03:04:05Z nowhere F abc\n" + line(1), contents(1, 2)},
		{"no final newline", "2030-01-02T03:04:05Z stdout F abc", "abc\n"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "0.log")
			crifake.WriteFile(t, path, tc.log)
			got, err := ReadTail(path)
			if err != nil || got != tc.want {
				t.Errorf("ReadTail = %.80q (%d bytes), %v; want %.80q (%d bytes)", got, len(got), err, tc.want, len(tc.want))
			}
		})
	}
	if _, err := ReadTail(filepath.Join(t.TempDir(), "missing.log")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ReadTail of a missing log: %v, want ErrNotExist", err)
	}
}

// The tail of a log whose last line is huge reads at most 1 MiB of it,
// in a few reads: well under 8 MiB allocated (a structural bound: reading
// it 8 KiB at a time, each read copying what was read before, allocated
// 64 MiB).
func TestReadLogTailHugeLine(t *testing.T) {
	path := filepath.Join(t.TempDir(), "0.log")
	crifake.WriteFile(t, path, "2030-01-02T03:04:05Z stdout F "+strings.Repeat("y", 16<<20)+"\n")
	var got string
	var err error
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	got, err = ReadTail(path)
	runtime.ReadMemStats(&after)
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("ReadTail of a 16 MiB line allocated %d bytes", alloc)
	if err != nil || got != "" {
		t.Errorf("ReadTail = %d bytes, %v; want none (no whole record in its last 1 MiB)", len(got), err)
	}
	if alloc >= 8<<20 {
		t.Errorf("ReadTail of a 16 MiB line allocated %d bytes, want < 8 MiB", alloc)
	}
}

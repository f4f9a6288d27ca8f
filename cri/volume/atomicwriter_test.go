package volume

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The atomic writer refuses, before it writes anything, a path that
// would leave the volume or collide with its own "..data" link and
// timestamped directories (the kubelet's AtomicWriter validatePath):
// written, "..data" was a link loop and a directory left behind on every
// sync.
func TestWriteAtomicallyRefusesReservedPaths(t *testing.T) {
	for _, tc := range []struct {
		path string
		want string // "": written
	}{
		{path: "name"},
		{path: "meta/labels"},
		{path: "a..b"},
		{path: "dir/..hidden"},
		{path: "..data", want: `invalid path "..data": must not start with '..'`},
		{path: "..data/name", want: `invalid path "..data/name": must not start with '..'`},
		{path: "..2026_01_01_00_00_00.1", want: "must not start with '..'"},
		{path: "..", want: `invalid path "..": must not contain '..'`},
		{path: "a/../../etc/passwd", want: "must not contain '..'"},
		{path: "/etc/passwd", want: "must be a relative path"},
		{path: "", want: "must not be empty"},
		{path: strings.Repeat("n", 256), want: "a file name must be at most 255 characters"},
		{path: strings.Repeat("d/", 2048) + "f", want: "must be at most 4096 characters"},
	} {
		t.Run(tc.path[:min(len(tc.path), 40)], func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "vol")
			files := map[string]volumeFile{"ok": {data: []byte("1"), mode: 0o644}, tc.path: {data: []byte("x"), mode: 0o644}}
			err := writeAtomically(dir, files, ownership{})
			if tc.want == "" {
				if err != nil {
					t.Fatalf("writeAtomically(%q): %v", tc.path, err)
				}
				if b, err := os.ReadFile(filepath.Join(dir, tc.path)); err != nil || string(b) != "x" {
					t.Errorf("%s: %q %v", tc.path, b, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("writeAtomically(%q): %v, want %q", tc.path, err, tc.want)
			}
			if _, err := os.Lstat(dir); !os.IsNotExist(err) {
				t.Errorf("the refused write made %s: %v", dir, err)
			}
		})
	}
}

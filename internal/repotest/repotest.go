// Package repotest is test support for tests that change podlife's own
// sources (the source and model mutants of explore and explore/container):
// they work on a copy of the repository, never on the tree itself.
package repotest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// CopyRepo copies the files git knows (tracked or not ignored) of root
// into a temporary directory and returns it.
func CopyRepo(t *testing.T, root string) string {
	t.Helper()
	dir := t.TempDir()
	files, err := exec.Command("git", "-C", root, "ls-files", "-co", "--exclude-standard").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(string(files)) {
		data, err := os.ReadFile(filepath.Join(root, f))
		if err != nil {
			continue // deleted in the working tree
		}
		if err := os.MkdirAll(filepath.Join(dir, filepath.Dir(f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

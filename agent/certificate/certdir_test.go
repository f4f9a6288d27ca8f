package certificate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPrepareCertDir(t *testing.T) {
	for _, tc := range []struct {
		name    string
		root    bool // needs root (chown)
		setup   func(t *testing.T, base string) string
		wantErr string // "": accepted
	}{
		{name: "missing: created 0700 with its parents", setup: func(_ *testing.T, base string) string {
			return filepath.Join(base, "var", "pki")
		}},
		{name: "the agent's own, 0700", setup: func(t *testing.T, base string) string {
			return mkdir(t, filepath.Join(base, "pki"), 0o700)
		}},
		{name: "a symbolic link", wantErr: "symbolic link", setup: func(t *testing.T, base string) string {
			real := mkdir(t, filepath.Join(base, "real"), 0o700)
			link := filepath.Join(base, "pki")
			if err := os.Symlink(real, link); err != nil {
				t.Fatal(err)
			}
			return link
		}},
		{name: "a file", wantErr: "not a directory", setup: func(t *testing.T, base string) string {
			path := filepath.Join(base, "pki")
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return path
		}},
		{name: "readable by group", wantErr: "open to group or others (mode 0750)", setup: func(t *testing.T, base string) string {
			return mkdir(t, filepath.Join(base, "pki"), 0o750)
		}},
		{name: "owned by another user", root: true, wantErr: "owned by uid 65534", setup: func(t *testing.T, base string) string {
			dir := mkdir(t, filepath.Join(base, "pki"), 0o700)
			if err := os.Chown(dir, 65534, 65534); err != nil {
				t.Fatal(err)
			}
			return dir
		}},
		{name: "in a directory others may write", wantErr: "writable by group or others without the sticky bit", setup: func(t *testing.T, base string) string {
			return filepath.Join(mkdir(t, filepath.Join(base, "open"), 0o777), "pki")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.root && os.Geteuid() != 0 {
				t.Skip("SKIPPED: needs root to give the directory to another user")
			}
			base := mkdir(t, filepath.Join(t.TempDir(), "base"), 0o755)
			dir := tc.setup(t, base)
			got, err := PrepareCertDir(dir)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !strings.Contains(err.Error(), "cert directory") {
					t.Fatalf("PrepareCertDir(%s): %v; want an error about the cert directory saying %q", dir, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(got)
			if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 || got != dir {
				t.Errorf("PrepareCertDir(%s) = %s (%v, mode %v); want the directory, 0700", dir, got, err, fi.Mode())
			}
		})
	}
}

func mkdir(t *testing.T, dir string, mode os.FileMode) string {
	t.Helper()
	if err := os.Mkdir(dir, mode); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil { // past the umask
		t.Fatal(err)
	}
	return dir
}

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// nobody is the uid of the unprivileged user the security tests act as.
const nobody = 65534

func TestPrepareRootDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// setup makes what the test needs under base and returns the root
		// directory to give prepareRootDir.
		setup    func(t *testing.T, base string) string
		wantErr  []string // all in the error; nil: accepted
		needRoot bool
	}{
		{name: "fresh path with missing parents", setup: func(_ *testing.T, base string) string {
			return filepath.Join(base, "a", "b", "root")
		}},
		{name: "existing 0700", setup: func(t *testing.T, base string) string { return mkdir(t, base, "root", 0o700) }},
		{name: "existing 0755", setup: func(t *testing.T, base string) string { return mkdir(t, base, "root", 0o755) }},
		{name: "world-writable", setup: func(t *testing.T, base string) string { return mkdir(t, base, "root", 0o777) },
			wantErr: []string{"writable by group or others", "0777"}},
		{name: "group-writable", setup: func(t *testing.T, base string) string { return mkdir(t, base, "root", 0o770) },
			wantErr: []string{"writable by group or others", "0770"}},
		{name: "owned by another user", needRoot: true, setup: func(t *testing.T, base string) string {
			dir := mkdir(t, base, "root", 0o700)
			if err := os.Chown(dir, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return dir
		}, wantErr: []string{"owned by uid 65534", "not by the agent's uid 0"}},
		{name: "symlink", setup: func(t *testing.T, base string) string {
			return symlink(t, mkdir(t, base, "real", 0o700), filepath.Join(base, "root"))
		}, wantErr: []string{"symbolic link", "resolves to"}},
		{name: "symlinked parent", setup: func(t *testing.T, base string) string {
			mkdir(t, mkdir(t, base, "real", 0o700), "root", 0o700)
			return filepath.Join(symlink(t, filepath.Join(base, "real"), filepath.Join(base, "parent")), "root")
		}, wantErr: []string{"symbolic link"}},
		{name: "fresh path under a symlinked parent", setup: func(t *testing.T, base string) string {
			return filepath.Join(symlink(t, mkdir(t, base, "real", 0o700), filepath.Join(base, "parent")), "root")
		}, wantErr: []string{"symbolic link"}},
		{name: "parent writable by others", setup: func(t *testing.T, base string) string {
			return filepath.Join(mkdir(t, base, "shared", 0o777), "root")
		}, wantErr: []string{"its parent", "without the sticky bit", "0777"}},
		{name: "parent writable by others with the sticky bit", setup: func(t *testing.T, base string) string {
			shared := mkdir(t, base, "shared", 0o777)
			if err := os.Chmod(shared, 0o777|os.ModeSticky); err != nil {
				t.Fatal(err)
			}
			return filepath.Join(shared, "root")
		}},
		{name: "parent owned by another user", needRoot: true, setup: func(t *testing.T, base string) string {
			parent := mkdir(t, base, "theirs", 0o755)
			if err := os.Chown(parent, nobody, nobody); err != nil {
				t.Fatal(err)
			}
			return mkdir(t, parent, "root", 0o700)
		}, wantErr: []string{"its parent", "owned by uid 65534"}},
		{name: "a file", setup: func(t *testing.T, base string) string {
			file := filepath.Join(base, "root")
			if err := os.WriteFile(file, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			return file
		}, wantErr: []string{"not a directory"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if tc.needRoot && os.Geteuid() != 0 {
				t.Skip("needs root to give a directory to another user")
			}
			dir := tc.setup(t, t.TempDir())
			got, err := prepareRootDir(dir)
			if tc.wantErr != nil {
				if err == nil {
					t.Fatalf("prepareRootDir(%s) accepted it", dir)
				}
				for _, want := range append([]string{dir}, tc.wantErr...) {
					if !strings.Contains(err.Error(), want) {
						t.Errorf("error %q does not mention %q", err, want)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("prepareRootDir(%s): %v", dir, err)
			}
			if got != dir {
				t.Errorf("prepareRootDir(%s) = %s", dir, got)
			}
			fi, err := os.Stat(dir)
			if err != nil || !fi.IsDir() || fi.Mode().Perm()&0o022 != 0 {
				t.Errorf("root directory %s after prepareRootDir: %v, %v", dir, fi, err)
			}
		})
	}
}

// A root directory the agent creates is its own alone.
func TestPrepareRootDirCreatesPrivate(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "root")
	if _, err := prepareRootDir(dir); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(dir)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o700 {
		t.Errorf("created with mode %04o, want 0700", fi.Mode().Perm())
	}
}

// mkdir makes base/name with exactly mode perm (the umask aside).
func mkdir(t *testing.T, base, name string, perm os.FileMode) string {
	t.Helper()
	dir := filepath.Join(base, name)
	if err := os.Mkdir(dir, perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, perm); err != nil {
		t.Fatal(err)
	}
	return dir
}

// symlink makes link point to target and returns link.
func symlink(t *testing.T, target, link string) string {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	return link
}

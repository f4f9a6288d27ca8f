package logs

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// RemoveContainerLog removes the log and its rotated files, nothing else
// of the directory, and refuses a path outside the root.
func TestRemoveContainerLog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		files   []string // under <root>/ns_p_u/app
		path    string   // relative to root; "/..." is absolute
		wantErr bool
		left    []string
	}{
		{name: "log and rotated", files: []string{"0.log", "0.log.20300102-030405", "0.log.20300102-030406", "1.log", "0.log.tmp"}, path: "ns_p_u/app/0.log", left: []string{"0.log.tmp", "1.log"}},
		{name: "rotated only", files: []string{"0.log.20300102-030405"}, path: "ns_p_u/app/0.log"},
		{name: "nothing there", path: "ns_p_u/app/0.log"},
		{name: "directory gone", path: "ns_p_u/gone/0.log"},
		{name: "outside the root", files: []string{"0.log"}, path: "/etc/0.log", wantErr: true, left: []string{"0.log"}},
		{name: "leading out", files: []string{"0.log"}, path: "../x/0.log", wantErr: true, left: []string{"0.log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "ns_p_u", "app")
			if err := os.MkdirAll(dir, 0o750); err != nil {
				t.Fatal(err)
			}
			for _, f := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, f), []byte("x\n"), 0o640); err != nil {
					t.Fatal(err)
				}
			}
			path := tc.path
			if !filepath.IsAbs(path) {
				path = filepath.Join(root, path)
			}
			err := RemoveContainerLog(root, path)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err %v, want error %v", err, tc.wantErr)
			}
			entries, err := os.ReadDir(dir)
			if err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
			var left []string
			for _, e := range entries {
				left = append(left, e.Name())
			}
			if !slices.Equal(left, tc.left) {
				t.Errorf("left %v, want %v", left, tc.left)
			}
		})
	}
}

// PodLogDirs finds the log directories by the UID their names end with;
// files, symbolic links and other names are not pods' log directories.
func TestPodLogDirs(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"ns_a_u1", "ns2_a_u1", "ns_b_u2", "u3", "x_y", "a_b_c_d", "ns_c_"} {
		if err := os.Mkdir(filepath.Join(root, d), 0o750); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(root, "ns_f_u4"), nil, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "ns_b_u2"), filepath.Join(root, "ns_l_u5")); err != nil {
		t.Fatal(err)
	}
	got, err := PodLogDirs(root)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{"u1": {"ns2_a_u1", "ns_a_u1"}, "u2": {"ns_b_u2"}}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for uid, names := range want {
		var paths []string
		for _, n := range names {
			paths = append(paths, filepath.Join(root, n))
		}
		if !slices.Equal(got[types.UID(uid)], paths) {
			t.Errorf("%s: got %v, want %v", uid, got[types.UID(uid)], paths)
		}
	}
	if got, err := PodLogDirs(filepath.Join(root, "missing")); err != nil || len(got) != 0 {
		t.Errorf("a missing root: %v, %v", got, err)
	}
}

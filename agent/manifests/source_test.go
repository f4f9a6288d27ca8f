package manifests

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/kubetypes"
)

var start = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// env is a manifest directory with a Source on it and a fake clock.
type env struct {
	t   *testing.T
	dir string
	clk *testingclock.FakeClock
	src *Source
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvAt(t, t.TempDir())
}

// newEnvAt is a fresh Source on dir, as after an agent restart.
func newEnvAt(t *testing.T, dir string) *env {
	t.Helper()
	e := &env{t: t, dir: dir, clk: testingclock.NewFakeClock(start)}
	var err error
	if e.src, err = NewSource(e.dir, "n1", e.clk); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *env) path(name string) string { return filepath.Join(e.dir, name) }

func (e *env) write(name, content string) {
	e.t.Helper()
	_ = os.Remove(e.path(name)) // it may be a symlink
	if err := os.WriteFile(e.path(name), []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) remove(name string) {
	e.t.Helper()
	if err := os.Remove(e.path(name)); err != nil {
		e.t.Fatal(err)
	}
}

func (e *env) rename(from, to string) {
	e.t.Helper()
	if err := os.Rename(e.path(from), e.path(to)); err != nil {
		e.t.Fatal(err)
	}
}

// podYAML is a minimal manifest; extra lines go under metadata.
func podYAML(name, image string, metadata ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Pod\nmetadata:\n  name: %s\n", name)
	for _, m := range metadata {
		fmt.Fprintf(&b, "  %s\n", m)
	}
	fmt.Fprintf(&b, "spec:\n  containers:\n  - name: c\n    image: %s\n", image)
	return b.String()
}

// show renders a change as "Op file podname" for the tables.
func show(c kubetypes.Change) string {
	return fmt.Sprintf("%s %s %s", c.Op, filepath.Base(c.Path), c.Pod.Name)
}

// step is one edit of the directory, then a scan and what it must return.
type step struct {
	do      func(e *env)
	changes []string   // shown changes, in order
	errs    [][]string // per error, in order: substrings it must contain
}

func (e *env) check(i int, s step) {
	e.t.Helper()
	if s.do != nil {
		s.do(e)
	}
	changes, errs := e.src.Scan()
	var got []string
	for _, c := range changes {
		got = append(got, show(c))
	}
	if strings.Join(got, "\n") != strings.Join(s.changes, "\n") {
		e.t.Errorf("step %d: changes\n%s\nwant\n%s", i, strings.Join(got, "\n"), strings.Join(s.changes, "\n"))
	}
	if len(errs) != len(s.errs) {
		e.t.Errorf("step %d: errors %q, want %d", i, errs, len(s.errs))
		return
	}
	for j, err := range errs {
		for _, w := range s.errs[j] {
			if !strings.Contains(err.Error(), w) {
				e.t.Errorf("step %d: error %q does not contain %q", i, err, w)
			}
		}
	}
}

func write(name, content string) func(*env) { return func(e *env) { e.write(name, content) } }
func remove(name string) func(*env)         { return func(e *env) { e.remove(name) } }
func rename(from, to string) func(*env)     { return func(e *env) { e.rename(from, to) } }

// removed tells the source what its watch would: the file was removed.
func removed(name string) func(*env) { return func(e *env) { e.src.Removed(e.path(name)) } }

// copyFile copies as cp does: the copy is modified now.
func copyFile(from, to string) func(*env) {
	return func(e *env) {
		e.t.Helper()
		data, err := os.ReadFile(e.path(from))
		if err != nil {
			e.t.Fatal(err)
		}
		e.write(to, string(data))
	}
}

// age sets a file's modification time to d before now.
func age(name string, d time.Duration) func(*env) {
	return func(e *env) {
		e.t.Helper()
		when := time.Now().Add(-d)
		if err := os.Chtimes(e.path(name), when, when); err != nil {
			e.t.Fatal(err)
		}
	}
}
func all(fs ...func(*env)) func(*env) {
	return func(e *env) {
		for _, f := range fs {
			f(e)
		}
	}
}

const uidLine = "uid: 11111111-2222-4333-8444-555555555555"

func TestScan(t *testing.T) {
	for _, c := range []struct {
		name  string
		steps []step
	}{
		{"add, steady state, remove", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{},
			{},
			{do: remove("a.yaml"), changes: []string{"Remove a.yaml p-n1"}},
			{},
		}},
		{"an edit replaces the pod (new UID)", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: write("a.yaml", podYAML("p", "img:2")), changes: []string{"Remove a.yaml p-n1", "Add a.yaml p-n1"}},
		}},
		{"removed and written again between scans, unseen: no change", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: all(remove("a.yaml"), write("a.yaml", podYAML("p", "img:1")))},
		}},
		{"removed and written again between scans, seen by the watch: the pod stops and starts again", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: all(remove("a.yaml"), removed("a.yaml"), write("a.yaml", podYAML("p", "img:1"))),
				changes: []string{"Remove a.yaml p-n1", "Add a.yaml p-n1"}},
			{},
		}},
		{"removed and written again empty: the last good version stops and starts again", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: all(remove("a.yaml"), removed("a.yaml"), write("a.yaml", "")),
				changes: []string{"Remove a.yaml p-n1", "Add a.yaml p-n1"}, errs: [][]string{{"a.yaml", "empty"}}},
		}},
		{"a removal seen of a file never reported changes nothing", []step{
			{do: all(write("b.yaml", podYAML("q", "img:1")), removed("a.yaml")), changes: []string{"Add b.yaml q-n1"}},
		}},
		{"a comment is not a change", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: write("a.yaml", "# edited\n"+podYAML("p", "img:1"))},
		}},
		{"rename replaces the pod (the path is in the UID)", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: rename("a.yaml", "b.yaml"), changes: []string{"Remove a.yaml p-n1", "Add b.yaml p-n1"}},
		}},
		{"an explicit UID makes an edit an Update", []step{
			{do: write("a.yaml", podYAML("p", "img:1", uidLine)), changes: []string{"Add a.yaml p-n1"}},
			{do: write("a.yaml", podYAML("p", "img:2", uidLine)), changes: []string{"Update a.yaml p-n1"}},
			{do: write("a.yaml", podYAML("p", "img:2", uidLine, "labels: {}"))}, // semantically equal
		}},
		{"an explicit UID moving to another file is an Update", []step{
			{do: write("a.yaml", podYAML("p", "img:1", uidLine)), changes: []string{"Add a.yaml p-n1"}},
			{do: rename("a.yaml", "b.yaml"), changes: []string{"Update b.yaml p-n1"}},
		}},
		{"only .yaml, .yml, .json files are read", []step{
			{do: func(e *env) {
				for _, name := range []string{".hidden.yaml", "notes.txt", "a.yaml~", "a.yaml.swp", "README"} {
					e.write(name, "not a pod")
				}
				if err := os.MkdirAll(e.path("sub.yaml"), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(e.dir, "sub.yaml", "x.yaml"), []byte(podYAML("x", "i")), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := syscall.Mkfifo(e.path("fifo.yaml"), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink("nowhere.yaml", e.path("dangling.yaml")); err != nil {
					t.Fatal(err)
				}
				outside := filepath.Join(t.TempDir(), "pod")
				if err := os.WriteFile(outside, []byte(podYAML("linked", "i")), 0o644); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(outside, e.path("link.yaml")); err != nil {
					t.Fatal(err)
				}
				e.write("a.yml", podYAML("a", "i"))
				e.write("b.json", `{"metadata": {"name": "b"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}`)
				e.write("C.YAML", podYAML("c", "i"))
			}, changes: []string{"Add C.YAML c-n1", "Add a.yml a-n1", "Add b.json b-n1", "Add link.yaml linked-n1"}},
		}},
		{"Removes, then Updates, then Adds, each by path", []step{
			{do: all(
				write("b.yaml", podYAML("b", "img:1")),
				write("c.yaml", podYAML("c", "img:1")),
				write("u.yaml", podYAML("u", "img:1", uidLine)),
			), changes: []string{"Add b.yaml b-n1", "Add c.yaml c-n1", "Add u.yaml u-n1"}},
			{do: all(
				write("a.yaml", podYAML("a", "img:1")),
				write("b.yaml", podYAML("b", "img:2")),
				remove("c.yaml"),
				write("u.yaml", podYAML("u", "img:2", uidLine)),
			), changes: []string{"Remove b.yaml b-n1", "Remove c.yaml c-n1", "Update u.yaml u-n1", "Add a.yaml a-n1", "Add b.yaml b-n1"}},
		}},
		{"a bad file keeps its last good pod, and the others go on", []step{
			{do: all(write("a.yaml", podYAML("a", "img:1")), write("b.yaml", podYAML("b", "img:1"))),
				changes: []string{"Add a.yaml a-n1", "Add b.yaml b-n1"}},
			{do: write("a.yaml", "spec: ["), errs: [][]string{{"a.yaml", "invalid YAML"}}},
			{}, // not reported again
			{do: write("b.yaml", podYAML("b", "img:2")), changes: []string{"Remove b.yaml b-n1", "Add b.yaml b-n1"}},
			{do: write("a.yaml", podYAML("", "img:1")), errs: [][]string{{"a.yaml", "metadata.name: Required value"}}},
			{do: write("a.yaml", podYAML("a", "img:2")), changes: []string{"Remove a.yaml a-n1", "Add a.yaml a-n1"}},
			{do: write("a.yaml", "spec: ["), errs: [][]string{{"a.yaml", "invalid YAML"}}}, // again: it was fine meanwhile
			{do: remove("a.yaml"), changes: []string{"Remove a.yaml a-n1"}},
			{do: write("c.yaml", "kind: Service\n"), errs: [][]string{{"c.yaml", `kind "Service"`}}},
		}},
		{"a file that cannot be read keeps its last good pod", []step{
			{do: write("a.yaml", podYAML("a", "img:1")), changes: []string{"Add a.yaml a-n1"}},
			{do: func(e *env) {
				e.remove("a.yaml")
				if err := os.Symlink("a.yaml", e.path("a.yaml")); err != nil { // a loop
					t.Fatal(err)
				}
			}, errs: [][]string{{"a.yaml", "cannot read"}}},
			{},
			{do: write("a.yaml", podYAML("a", "img:1"))}, // the same pod again
		}},
		// First come, first served: `cp web.yaml web-copy.yaml` must not
		// replace the running pod, though the copy sorts first.
		{"a copy of a running pod's manifest waits, whatever its name", []step{
			{do: write("web.yaml", podYAML("web", "img:1")), changes: []string{"Add web.yaml web-n1"}},
			{do: copyFile("web.yaml", "web-copy.yaml"),
				errs: [][]string{{"web-copy.yaml: pod web-n1_default: its full name is already taken by the pod of ", "/web.yaml", "waiting"}}},
			{}, // not reported again
			{do: remove("web.yaml"), changes: []string{"Remove web.yaml web-n1", "Add web-copy.yaml web-n1"}},
		}},
		{"a waiting file is admitted when the holder's pod is renamed", []step{
			{do: write("b.yaml", podYAML("p", "img:1")), changes: []string{"Add b.yaml p-n1"}},
			{do: write("a.yaml", podYAML("p", "img:2")), errs: [][]string{{"a.yaml", "full name", "b.yaml"}}},
			{do: write("b.yaml", podYAML("q", "img:1")), changes: []string{"Remove b.yaml p-n1", "Add a.yaml p-n1", "Add b.yaml q-n1"}},
		}},
		{"an edit in place keeps the name from a waiting file", []step{
			{do: write("b.yaml", podYAML("p", "img:1")), changes: []string{"Add b.yaml p-n1"}},
			{do: write("a.yaml", podYAML("p", "img:2")), errs: [][]string{{"a.yaml", "b.yaml"}}},
			{do: write("b.yaml", podYAML("p", "img:3")), changes: []string{"Remove b.yaml p-n1", "Add b.yaml p-n1"}},
			{do: write("b.yaml", podYAML("p", "img:4", uidLine)), changes: []string{"Remove b.yaml p-n1", "Add b.yaml p-n1"}},
			{do: write("b.yaml", podYAML("p", "img:5", uidLine)), changes: []string{"Update b.yaml p-n1"}},
		}},
		{"an edit taking another file's name is refused, and its pod kept", []step{
			{do: all(write("a.yaml", podYAML("p", "img:1")), write("b.yaml", podYAML("q", "img:1"))),
				changes: []string{"Add a.yaml p-n1", "Add b.yaml q-n1"}},
			{do: write("b.yaml", podYAML("p", "img:2")), errs: [][]string{{"b.yaml", "full name", "a.yaml"}}},
			{},
			{do: remove("a.yaml"), changes: []string{"Remove a.yaml p-n1", "Remove b.yaml q-n1", "Add b.yaml p-n1"}},
		}},
		{"a duplicate UID waits for its holder", []step{
			{do: write("b.yaml", podYAML("p", "i", uidLine)), changes: []string{"Add b.yaml p-n1"}},
			{do: all(write("a.yaml", podYAML("q", "i", uidLine)), write("c.yaml", podYAML("r", "i"))),
				changes: []string{"Add c.yaml r-n1"}, errs: [][]string{{"a.yaml", "pod q-n1_default: its UID 11111111-2222-4333-8444-555555555555 is already taken by the pod of ", "b.yaml"}}},
			{},
			// The UID is the pod's identity, as in the kubelet: its name changed.
			{do: remove("b.yaml"), changes: []string{"Update a.yaml q-n1"}},
		}},
		{"at the first scan, the file modified longest ago wins", []step{
			{do: all(
				write("web.yaml", podYAML("web", "img:1")), age("web.yaml", 2*time.Hour),
				write("web-copy.yaml", podYAML("web", "img:1")), age("web-copy.yaml", time.Hour),
				write("u2.yaml", podYAML("u2", "i", uidLine)), age("u2.yaml", 2*time.Hour),
				write("u1.yaml", podYAML("u1", "i", uidLine)), age("u1.yaml", time.Hour),
			), changes: []string{"Add u2.yaml u2-n1", "Add web.yaml web-n1"},
				errs: [][]string{{"u1.yaml", "UID", "u2.yaml"}, {"web-copy.yaml", "full name", "web.yaml"}}},
		}},
		{"at the first scan, of files as old, the first by name wins", []step{
			{do: all(
				write("a.yaml", podYAML("p", "img:1")), write("b.yaml", podYAML("p", "img:2")),
				age("a.yaml", time.Hour), age("b.yaml", time.Hour),
			), changes: []string{"Add a.yaml p-n1"}, errs: [][]string{{"b.yaml", "full name", "a.yaml"}}},
			{},
			{do: remove("a.yaml"), changes: []string{"Remove a.yaml p-n1", "Add b.yaml p-n1"}},
		}},
		{"a kept pod still holds its full name", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: all(write("a.yaml", "spec: ["), write("b.yaml", podYAML("p", "img:2"))),
				errs: [][]string{{"a.yaml", "invalid YAML"}, {"b.yaml", "already taken by the pod of", "a.yaml"}}},
		}},
		{"one name in two namespaces is no conflict", []step{
			{do: all(write("a.yaml", podYAML("p", "i", "namespace: x")), write("b.yaml", podYAML("p", "i", "namespace: y"))),
				changes: []string{"Add a.yaml p-n1", "Add b.yaml p-n1"}},
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			for i, s := range c.steps {
				e.check(i, s)
			}
		})
	}
}

// A replaced pod gets a new UID, an updated one keeps its UID and when it
// was first seen; a Remove carries the pod as it was added.
func TestScanIdentity(t *testing.T) {
	e := newEnv(t)
	scan := func() []kubetypes.Change {
		t.Helper()
		changes, errs := e.src.Scan()
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		return changes
	}
	e.write("a.yaml", podYAML("a", "img:1"))
	e.write("u.yaml", podYAML("u", "img:1", uidLine))
	first := scan()
	added, addedU := first[0].Pod, first[1].Pod
	seen := start.Format(time.RFC3339Nano)
	for _, p := range []*kubetypes.Change{&first[0], &first[1]} {
		if got := p.Pod.Annotations[kubetypes.ConfigSeenAnnotation]; got != seen {
			t.Errorf("%s: config.seen = %q, want %q", p.Path, got, seen)
		}
	}

	e.clk.Step(time.Minute)
	e.write("a.yaml", podYAML("a", "img:2"))
	e.write("u.yaml", podYAML("u", "img:2", uidLine))
	second := scan()
	if len(second) != 3 {
		t.Fatalf("changes %v, want Remove a, Update u, Add a", second)
	}
	if rm := second[0]; rm.Op != kubetypes.Remove || rm.Pod != added {
		t.Errorf("Remove carries %v, want the pod added first", rm.Pod)
	}
	up := second[1]
	if up.Op != kubetypes.Update || up.Pod.UID != addedU.UID || up.Pod.Spec.Containers[0].Image != "img:2" {
		t.Errorf("Update %v: want UID %s with img:2", up.Pod, addedU.UID)
	}
	if got := up.Pod.Annotations[kubetypes.ConfigSeenAnnotation]; got != seen {
		t.Errorf("Update: config.seen = %q, want the first seen %q", got, seen)
	}
	add := second[2]
	if add.Op != kubetypes.Add || add.Pod.UID == added.UID {
		t.Errorf("Add %v: want a new UID", add.Pod)
	}
	if got, want := add.Pod.Annotations[kubetypes.ConfigSeenAnnotation], start.Add(time.Minute).Format(time.RFC3339Nano); got != want {
		t.Errorf("Add: config.seen = %q, want %q", got, want)
	}
}

// A missing directory holds no pods: it is reported once, as a *DirError
// that says so and is fs.ErrNotExist, and removing the directory removes its
// pods, as in the kubelet.
func TestScanMissingDirectory(t *testing.T) {
	e := newEnv(t)
	if err := os.Remove(e.dir); err != nil {
		t.Fatal(err)
	}
	missing := "manifest directory " + e.dir + " does not exist"
	for i, s := range []step{
		{errs: [][]string{{missing}}},
		{},
		{do: func(e *env) {
			if err := os.Mkdir(e.dir, 0o755); err != nil {
				t.Fatal(err)
			}
			e.write("a.yaml", podYAML("a", "i"))
		}, changes: []string{"Add a.yaml a-n1"}},
		{do: func(e *env) {
			if err := os.RemoveAll(e.dir); err != nil {
				t.Fatal(err)
			}
		}, changes: []string{"Remove a.yaml a-n1"}, errs: [][]string{{missing}}},
	} {
		e.check(i, s)
	}
	_, errs := newEnvAt(t, e.dir).src.Scan()
	if len(errs) != 1 {
		t.Fatalf("errors %v, want one", errs)
	}
	if de, ok := errors.AsType[*DirError](errs[0]); !ok || de.Dir != e.dir || !errors.Is(errs[0], fs.ErrNotExist) {
		t.Errorf("error %#v is not a *DirError for %s that is fs.ErrNotExist", errs[0], e.dir)
	}
	if _, ok := errors.AsType[*FileError](errs[0]); ok {
		t.Errorf("a missing directory is reported as a bad manifest: %v", errs[0])
	}
}

// A directory that exists but cannot be listed changes nothing.
func TestScanUnlistableDirectory(t *testing.T) {
	e := newEnv(t)
	e.write("a.yaml", podYAML("a", "i"))
	e.check(0, step{changes: []string{"Add a.yaml a-n1"}})
	// Replace the directory by a file: ReadDir fails with ENOTDIR.
	if err := os.RemoveAll(e.dir); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(e.dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	e.check(1, step{errs: [][]string{{e.dir, "not a directory"}}})
	e.check(2, step{})
}

func TestNewSource(t *testing.T) {
	for _, c := range []struct{ dir, node, want string }{
		{"", "n1", "directory"},
		{"/m", "", "node name"},
		{"/m", "under_score", "node name"},
	} {
		if _, err := NewSource(c.dir, c.node, nil); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("NewSource(%q, %q): err = %v, want one about the %s", c.dir, c.node, err, c.want)
		}
	}
	t.Chdir(t.TempDir())
	s, err := NewSource("manifests", "n1", nil)
	if err != nil {
		t.Fatal(err)
	}
	if !filepath.IsAbs(s.Dir()) {
		t.Errorf("Dir() = %q, want an absolute path", s.Dir())
	}
}

// Steady state is cheap: a file whose content hash is unchanged, even if
// written again, is not decoded again.
func TestScanSkipsUnchangedContent(t *testing.T) {
	e := newEnv(t)
	e.write("a.yaml", podYAML("a", "i"))
	e.check(0, step{changes: []string{"Add a.yaml a-n1"}})
	decoded := e.src.files[e.path("a.yaml")].pod
	e.write("a.yaml", podYAML("a", "i"))
	e.check(1, step{})
	if e.src.files[e.path("a.yaml")].pod != decoded {
		t.Error("an unchanged file was decoded again")
	}
	e.write("a.yaml", "# edited\n"+podYAML("a", "i"))
	e.check(2, step{})
	if e.src.files[e.path("a.yaml")].pod == decoded {
		t.Error("a changed file was not decoded again")
	}
}

// After a restart, the first scan gives a name to the file modified longest
// ago: the original keeps it from a later copy, whatever their names.
func TestScanRestartKeepsTheOriginal(t *testing.T) {
	e := newEnv(t)
	e.write("web.yaml", podYAML("web", "img:1"))
	age("web.yaml", time.Hour)(e)
	e.check(0, step{changes: []string{"Add web.yaml web-n1"}})
	copyFile("web.yaml", "web-copy.yaml")(e)
	e.check(1, step{errs: [][]string{{"web-copy.yaml", "web.yaml"}}})

	restarted := newEnvAt(t, e.dir)
	restarted.check(0, step{changes: []string{"Add web.yaml web-n1"}, errs: [][]string{{"web-copy.yaml", "full name", "web.yaml"}}})
}

// A manifest over MaxManifestSize is refused by its size, without reading
// it, and the other files' pods still come; one growing as it is read is
// cut at the limit.
func TestScanTooLargeManifest(t *testing.T) {
	e := newEnv(t)
	e.write("a.yaml", podYAML("a", "i"))
	e.write("big.yaml", "")
	if err := os.Truncate(e.path("big.yaml"), 50<<20); err != nil { // sparse
		t.Fatal(err)
	}
	e.write("c.yaml", podYAML("c", "i"))

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	e.check(0, step{
		changes: []string{"Add a.yaml a-n1", "Add c.yaml c-n1"},
		errs:    [][]string{{e.path("big.yaml") + ": cannot read: manifest too large: 52428800 bytes, over the limit of 10485760 bytes (10 MiB)"}},
	})
	runtime.ReadMemStats(&after)
	if read := after.TotalAlloc - before.TotalAlloc; read > 10<<20 {
		t.Errorf("the scan allocated %d bytes: the large file was read", read)
	}
	e.check(1, step{}) // reported once

	// A good file that grows too large keeps its pod, as a bad file does.
	if err := os.Truncate(e.path("a.yaml"), MaxManifestSize+1); err != nil {
		t.Fatal(err)
	}
	e.check(2, step{errs: [][]string{{"a.yaml", "10485761 bytes"}}})
}

// endless is a file that grows as fast as it is read.
type endless struct{ read int }

func (e *endless) Read(p []byte) (int, error) {
	e.read += len(p)
	return len(p), nil
}

// A file that grows between the size check and the read is read only up to
// the limit.
func TestReadAtMostMax(t *testing.T) {
	r := &endless{}
	_, err := readAtMostMax(r)
	if err == nil || !strings.Contains(err.Error(), "manifest too large: more than 10485760 bytes") {
		t.Errorf("err = %v, want manifest too large", err)
	}
	if r.read > MaxManifestSize+1 {
		t.Errorf("read %d bytes, more than the limit", r.read)
	}
}

// The limit is inclusive: a valid manifest of exactly MaxManifestSize bytes
// is read.
func TestScanManifestOfMaxSize(t *testing.T) {
	e := newEnv(t)
	pod := podYAML("a", "i") + "# "
	e.write("a.yaml", pod+strings.Repeat("x", MaxManifestSize-len(pod)))
	e.check(0, step{changes: []string{"Add a.yaml a-n1"}})
}

// Faults lists what stands after each scan, reported then or before: a
// bad file until it is mended or removed, a file waiting for a name until
// the holder lets go, the missing directory until it is created.
func TestFaults(t *testing.T) {
	e := newEnv(t)
	for i, s := range []struct {
		do   func(e *env)
		want [][]string // per fault, in order: substrings it must contain
	}{
		{do: write("a.yaml", podYAML("a", "i"))},
		{do: write("bad.yaml", "kind: Pod\nmetadata: {name: [x\n"), want: [][]string{{e.path("bad.yaml")}}},
		{want: [][]string{{e.path("bad.yaml")}}}, // reported once, still standing
		{do: copyFile("a.yaml", "0-copy.yaml"), want: [][]string{{e.path("0-copy.yaml"), e.path("a.yaml")}, {e.path("bad.yaml")}}},
		{do: write("bad.yaml", podYAML("b", "i")), want: [][]string{{e.path("0-copy.yaml")}}},
		{do: remove("a.yaml")}, // the copy takes the name over
		{do: func(e *env) {
			if err := os.RemoveAll(e.dir); err != nil {
				t.Fatal(err)
			}
		}, want: [][]string{{"manifest directory " + e.dir + " does not exist"}}},
		{do: func(e *env) {
			if err := os.Mkdir(e.dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		if s.do != nil {
			s.do(e)
		}
		e.src.Scan()
		faults := e.src.Faults()
		if len(faults) != len(s.want) {
			t.Fatalf("step %d: faults %q, want %d", i, faults, len(s.want))
		}
		for j, err := range faults {
			for _, w := range s.want[j] {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("step %d: fault %q does not contain %q", i, err, w)
				}
			}
		}
	}
}

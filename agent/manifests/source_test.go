package manifests

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
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
	e := &env{t: t, dir: t.TempDir(), clk: testingclock.NewFakeClock(start)}
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
func show(c Change) string {
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
			{do: write("a.yaml", podYAML("", "img:1")), errs: [][]string{{"a.yaml", "metadata.name is required"}}},
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
		{"a duplicate UID: the later path is rejected", []step{
			{do: all(
				write("a.yaml", podYAML("p", "i", uidLine)),
				write("b.yaml", podYAML("q", "i", uidLine)),
				write("c.yaml", podYAML("r", "i")),
			), changes: []string{"Add a.yaml p-n1", "Add c.yaml r-n1"}, errs: [][]string{{"b.yaml", "a.yaml", "11111111-2222-4333-8444-555555555555"}}},
			{},
			// The UID is the pod's identity, as in the kubelet: its name changed.
			{do: remove("a.yaml"), changes: []string{"Update b.yaml q-n1"}},
		}},
		{"a duplicate full name: the later path is rejected", []step{
			{do: all(write("a.yaml", podYAML("p", "img:1")), write("b.yaml", podYAML("p", "img:2"))),
				changes: []string{"Add a.yaml p-n1"}, errs: [][]string{{"b.yaml", "p-n1_default", "already defined by", "a.yaml"}}},
			{},
			{do: remove("a.yaml"), changes: []string{"Remove a.yaml p-n1", "Add b.yaml p-n1"}},
		}},
		{"a new file sorting earlier takes the full name over", []step{
			{do: write("b.yaml", podYAML("p", "img:1")), changes: []string{"Add b.yaml p-n1"}},
			{do: write("a.yaml", podYAML("p", "img:2")),
				changes: []string{"Remove b.yaml p-n1", "Add a.yaml p-n1"}, errs: [][]string{{"b.yaml", "a.yaml"}}},
		}},
		{"a kept pod still holds its full name", []step{
			{do: write("a.yaml", podYAML("p", "img:1")), changes: []string{"Add a.yaml p-n1"}},
			{do: all(write("a.yaml", "spec: ["), write("b.yaml", podYAML("p", "img:2"))),
				errs: [][]string{{"a.yaml", "invalid YAML"}, {"b.yaml", "already defined by", "a.yaml"}}},
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
	scan := func() []Change {
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
	for _, p := range []*Change{&first[0], &first[1]} {
		if got := p.Pod.Annotations[ConfigSeenAnnotation]; got != seen {
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
	if rm := second[0]; rm.Op != Remove || rm.Pod != added {
		t.Errorf("Remove carries %v, want the pod added first", rm.Pod)
	}
	up := second[1]
	if up.Op != Update || up.Pod.UID != addedU.UID || up.Pod.Spec.Containers[0].Image != "img:2" {
		t.Errorf("Update %v: want UID %s with img:2", up.Pod, addedU.UID)
	}
	if got := up.Pod.Annotations[ConfigSeenAnnotation]; got != seen {
		t.Errorf("Update: config.seen = %q, want the first seen %q", got, seen)
	}
	add := second[2]
	if add.Op != Add || add.Pod.UID == added.UID {
		t.Errorf("Add %v: want a new UID", add.Pod)
	}
	if got, want := add.Pod.Annotations[ConfigSeenAnnotation], start.Add(time.Minute).Format(time.RFC3339Nano); got != want {
		t.Errorf("Add: config.seen = %q, want %q", got, want)
	}
}

// A missing directory holds no pods: it is reported once, and removing the
// directory removes its pods, as in the kubelet.
func TestScanMissingDirectory(t *testing.T) {
	e := newEnv(t)
	if err := os.Remove(e.dir); err != nil {
		t.Fatal(err)
	}
	for i, s := range []step{
		{errs: [][]string{{e.dir, "cannot list the manifest directory", "no such file"}}},
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
		}, changes: []string{"Remove a.yaml a-n1"}, errs: [][]string{{e.dir, "no such file"}}},
	} {
		e.check(i, s)
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

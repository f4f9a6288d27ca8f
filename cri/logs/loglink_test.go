package logs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

// The links' names are the kubelet's, cut to ext4's 255 bytes, in the
// pod log root's sibling "containers".
func TestLinkPath(t *testing.T) {
	long := strings.Repeat("n", 250)
	for _, tc := range []struct {
		name, root, pod, ns, container, id, want string
	}{
		{"kubelet's", "/var/log/pods", "web", "default", "app", "0123456789ab", "/var/log/containers/web_default_app-0123456789ab.log"},
		{"a root of a test", "/tmp/x/log/pods/", "web", "ns", "app", "abcdef", "/tmp/x/log/containers/web_ns_app-abcdef.log"},
		{"cut to 255 bytes", "/var/log/pods", long, "ns", "app", "abcdef", "/var/log/containers/" + (long + "_ns_a")[:251] + ".log"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := LinkPath(tc.root, tc.pod, tc.ns, tc.container, tc.id)
			if got != tc.want || len(filepath.Base(got)) > 255 {
				t.Errorf("LinkPath = %q, want %q", got, tc.want)
			}
		})
	}
}

// Link makes the link to an existing log and none to a missing one;
// Unlink removes it by the instance's labels; RemoveDanglingLinks removes
// the links whose log is gone unless their instance still runs.
func TestLinkUnlinkDangling(t *testing.T) {
	root := filepath.Join(t.TempDir(), "pods")
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns", UID: "u1"}}
	logFile := func(name string) string {
		p := filepath.Join(root, "ns_web_u1", name, "0.log")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	labels := map[string]string{cri.PodNameLabel: "web", cri.PodNamespaceLabel: "ns"}
	exists := func(p string) bool { _, err := os.Lstat(p); return err == nil }

	app, side := logFile("app"), logFile("side")
	for _, c := range []struct{ name, id, log string }{{"app", "aaaaaaaa", app}, {"side", "ssssssss", side}} {
		if err := Link(root, c.log, pod, c.name, c.id); err != nil {
			t.Fatal(err)
		}
	}
	if err := Link(root, filepath.Join(root, "ns_web_u1", "none", "0.log"), pod, "none", "nnnnnnnn"); err != nil {
		t.Fatal(err)
	}
	appLink, sideLink := LinkPath(root, "web", "ns", "app", "aaaaaaaa"), LinkPath(root, "web", "ns", "side", "ssssssss")
	if target, err := os.Readlink(appLink); err != nil || target != app {
		t.Fatalf("link %s -> %q, %v; want %s", appLink, target, err, app)
	}
	if exists(LinkPath(root, "web", "ns", "none", "nnnnnnnn")) {
		t.Error("a link to a log the runtime did not make")
	}
	if err := Link(root, "/etc/passwd", pod, "app", "bbbbbbbb"); err == nil {
		t.Error("Link accepted a log outside the log root")
	}
	if err := Link(root, app, &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "../x", Namespace: "ns"}}, "app", "cccccccc"); err == nil {
		t.Error("Link accepted a pod name with a path in it")
	}

	if err := Unlink(root, "aaaaaaaa", "app", labels); err != nil || exists(appLink) {
		t.Fatalf("Unlink: %v, link there %v", err, exists(appLink))
	}
	if err := Unlink(root, "aaaaaaaa", "app", labels); err != nil {
		t.Errorf("a second Unlink: %v", err)
	}

	// side's log goes (a rotation's rename, or the pod directory removed):
	// kept while side runs, removed once it exited, or is unknown, or its
	// status fails.
	if err := os.Remove(side); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		state    runtimeapi.ContainerState
		found    bool
		err      error
		wantKept bool
	}{
		{"running", runtimeapi.ContainerState_CONTAINER_RUNNING, true, nil, true},
		{"exited", runtimeapi.ContainerState_CONTAINER_EXITED, true, nil, false},
		{"unknown", 0, false, nil, false},
		{"status failed", 0, false, errors.New("unavailable"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := Link(root, logFile("side"), pod, "side", "ssssssss"); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(side); err != nil {
				t.Fatal(err)
			}
			var asked string
			err := RemoveDanglingLinks(context.Background(), root, func(_ context.Context, id string) (runtimeapi.ContainerState, bool, error) {
				asked = id
				return tc.state, tc.found, tc.err
			})
			if err != nil || asked != "ssssssss" || exists(sideLink) != tc.wantKept {
				t.Errorf("RemoveDanglingLinks: %v, asked %q, link kept %v; want kept %v", err, asked, exists(sideLink), tc.wantKept)
			}
			_ = os.Remove(sideLink)
		})
	}
}

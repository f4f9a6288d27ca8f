package logs

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// Lookup finds an instance's log from the pod's fields and the
// runtime's attempt: the latest instance, or the one before with
// previous; every missing piece is a LogLookupError naming it, and a
// symbolic link in place of the log's directories is refused.
func TestContainerLog(t *testing.T) {
	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid1"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app"}}},
	}
	instance := func(id string, attempt uint32, created int64) *runtimeapi.Container {
		return &runtimeapi.Container{Id: id, CreatedAt: created, Metadata: &runtimeapi.ContainerMetadata{Name: "app", Attempt: attempt},
			State: runtimeapi.ContainerState_CONTAINER_EXITED}
	}
	starting := func(id string, attempt uint32, created int64) *runtimeapi.Container {
		c := instance(id, attempt, created)
		c.State = runtimeapi.ContainerState_CONTAINER_CREATED
		return c
	}
	tests := []struct {
		name      string
		instances []*runtimeapi.Container
		files     []string // made under the pod's log directory
		link      bool     // the container's directory is a symbolic link
		previous  bool
		want      string // the log's path under the pod's log directory
		err       string
		notFound  bool
	}{
		{name: "the latest", instances: []*runtimeapi.Container{instance("a", 0, 1), instance("b", 1, 2)}, files: []string{"app/0.log", "app/1.log"}, want: "app/1.log"},
		{name: "the previous", instances: []*runtimeapi.Container{instance("b", 1, 2), instance("a", 0, 1)}, files: []string{"app/0.log", "app/1.log"}, previous: true, want: "app/0.log"},
		{name: "no previous", instances: []*runtimeapi.Container{instance("a", 0, 1)}, files: []string{"app/0.log"}, previous: true,
			err: `container "app" of pod ns/web has no previous instance`, notFound: true},
		{name: "the latest not started yet", instances: []*runtimeapi.Container{instance("a", 0, 1), starting("b", 1, 2)}, files: []string{"app/0.log", "app/1.log"},
			err: `container "app" in pod ns/web is waiting to start: ContainerCreating`, notFound: true},
		{name: "the previous while the latest starts", instances: []*runtimeapi.Container{instance("a", 0, 1), starting("b", 1, 2)}, files: []string{"app/0.log", "app/1.log"},
			previous: true, want: "app/0.log"},
		{name: "not created", err: `container "app" of pod ns/web has not been created yet`, notFound: true},
		{name: "no log directory", instances: []*runtimeapi.Container{instance("a", 0, 1)}, err: `container "app" of pod ns/web has no log directory`, notFound: true},
		{name: "no log file", instances: []*runtimeapi.Container{instance("a", 0, 1)}, files: []string{"app/"}, err: "(restart 0) has no log file", notFound: true},
		{name: "a linked directory", instances: []*runtimeapi.Container{instance("a", 0, 1)}, link: true, err: "is not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			dir := filepath.Join(root, "ns_web_uid1")
			for _, f := range tt.files {
				p := filepath.Join(dir, f)
				if strings.HasSuffix(f, "/") {
					if err := os.MkdirAll(p, 0o755); err != nil {
						t.Fatal(err)
					}
					continue
				}
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			if tt.link {
				elsewhere := t.TempDir()
				if err := os.WriteFile(filepath.Join(elsewhere, "0.log"), nil, 0o600); err != nil {
					t.Fatal(err)
				}
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Symlink(elsewhere, filepath.Join(dir, "app")); err != nil {
					t.Fatal(err)
				}
			}
			log, err := Lookup(t.Context(), &rotationRuntime{containers: tt.instances}, root, pod, "", tt.previous)
			if tt.err != "" {
				le, ok := errors.AsType[*LookupError](err)
				if err == nil || !strings.Contains(err.Error(), tt.err) || (tt.notFound && (!ok || !le.NotFound)) {
					t.Fatalf("Lookup: %v, want error %q (not found: %v)", err, tt.err, tt.notFound)
				}
				return
			}
			if err != nil {
				t.Fatalf("Lookup: %v", err)
			}
			if want := filepath.Join(dir, tt.want); log.Path != want {
				t.Errorf("Lookup's path is %s, want %s", log.Path, want)
			}
		})
	}
}

func TestPodLogDir(t *testing.T) {
	for _, tc := range []struct {
		name      string
		edit      func(*v1.Pod)
		wantDir   string
		wantError []string // all in the error; nil: no error
	}{
		{"kubelet layout", func(*v1.Pod) {}, "/logs/ns_p_uid-p", nil},
		{"uid climbing out", func(p *v1.Pod) { p.UID = "x/../../../escaped" }, "", []string{"pod ns/p", "metadata.uid", `"x/../../../escaped"`}},
		{"uid with a separator", func(p *v1.Pod) { p.UID = "a/b" }, "", []string{"metadata.uid", `"a/b"`}},
		{"name ..", func(p *v1.Pod) { p.Name = ".." }, "", []string{"pod ns/..", "metadata.name", `".."`}},
		{"name .", func(p *v1.Pod) { p.Name = "." }, "", []string{"metadata.name", `"."`}},
		{"absolute namespace", func(p *v1.Pod) { p.Namespace = "/etc" }, "", []string{"metadata.namespace", `"/etc"`}},
		{"empty namespace", func(p *v1.Pod) { p.Namespace = "" }, "", []string{"metadata.namespace", `""`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.MakePod("p", v1.RestartPolicyAlways)
			tc.edit(pod)
			dir, err := PodDir("/logs", pod)
			if tc.wantError == nil {
				if err != nil || dir != tc.wantDir {
					t.Fatalf("PodDir = %q, %v; want %q", dir, err, tc.wantDir)
				}
				return
			}
			if err == nil {
				t.Fatalf("PodDir = %q, want an error", dir)
			}
			for _, want := range tc.wantError {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %s", err, want)
				}
			}
		})
	}
}

// The container a log request names is checked against the pod's regular,
// init and ephemeral containers; the refusal lists them as kubectl does.
func TestLogContainerName(t *testing.T) {
	pod := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: "ns"}, Spec: v1.PodSpec{
		Containers:          []v1.Container{{Name: "app"}},
		InitContainers:      []v1.Container{{Name: "setup"}},
		EphemeralContainers: []v1.EphemeralContainer{{EphemeralContainerCommon: v1.EphemeralContainerCommon{Name: "debugger"}}},
	}}
	for _, tc := range []struct {
		name, container, want, wantErr string
	}{
		{name: "regular", container: "app", want: "app"},
		{name: "init", container: "setup", want: "setup"},
		{name: "ephemeral", container: "debugger", want: "debugger"},
		{name: "unknown", container: "nope",
			wantErr: `container "nope" is not valid for pod ns/web, choose one of: [app] or one of the init containers: [setup] or one of the ephemeral containers: [debugger]`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := logContainerName(pod, tc.container)
			if tc.wantErr != "" {
				if err == nil || err.Error() != tc.wantErr {
					t.Errorf("logContainerName = %q, %v; want error %q", got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("logContainerName = %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

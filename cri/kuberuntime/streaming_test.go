package kuberuntime

import (
	"context"
	"errors"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/internal/crifake"
)

// The streaming calls go to the running instance of the named container
// (or the pod's ready sandbox); a container not in the spec, or not
// running, is a NotFound error naming it, and the runtime is not asked.
func TestStreamingCalls(t *testing.T) {
	h := newHarness(t, Options{}, "img", "img2")
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}, crifake.Ctr{Name: "side", Image: "img2"})
	h.mustSync(pod)
	ctx := context.Background()
	app := crifake.ContainerID(pod, 0, "app", 0)

	if _, err := h.s.Exec(ctx, pod, "app", &runtimeapi.ExecRequest{Cmd: []string{"sh"}, Stdout: true}); err != nil {
		t.Errorf("Exec in a running container: %v", err)
	}
	if _, err := h.s.Attach(ctx, pod, "app", &runtimeapi.AttachRequest{Stdout: true}); err != nil {
		t.Errorf("Attach to a running container: %v", err)
	}
	if _, err := h.s.PortForward(ctx, pod, []int32{80}); err != nil {
		t.Errorf("PortForward into a ready sandbox: %v", err)
	}
	var execs []string
	h.rt.OnExec = func(_ context.Context, id string, cmd []string) error {
		execs = append(execs, id+" "+strings.Join(cmd, " "))
		return nil
	}
	if _, err := h.s.RunInContainer(ctx, pod, "app", []string{"echo", "hi"}); err != nil || len(execs) != 1 || execs[0] != app+" echo hi" {
		t.Errorf("RunInContainer: %v, ran %q; want echo hi in %s", err, execs, app)
	}
	for _, c := range []string{"Exec", "Attach", "PortForward"} {
		if n := h.calls(c); n != 1 {
			t.Errorf("the runtime got %d %s calls, want 1", n, c)
		}
	}

	h.exit(crifake.ContainerID(pod, 0, "side", 0), 0)
	for name, want := range map[string]string{"side": `container "side" of pod ns/web is not running`, "nope": `container "nope" is not in pod ns/web`} {
		_, err := h.s.Exec(ctx, pod, name, &runtimeapi.ExecRequest{Cmd: []string{"sh"}, Stdout: true})
		var nf interface{ NotFound() bool }
		if err == nil || !strings.Contains(err.Error(), want) || !errors.As(err, &nf) || !nf.NotFound() {
			t.Errorf("Exec in %s: %v, want a NotFound error %q", name, err, want)
		}
	}
	if n := h.calls("Exec"); n != 1 {
		t.Errorf("the runtime got %d Exec calls, want none for the refused ones", n)
	}
}

package embedded

import (
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// What the agent asks besides the lifecycle: who the runtime is, whether it
// is ready, exec, images; and the clear refusal of what it cannot do.
func TestService(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	if v, err := c.rs.Version(ctx, "v1"); err != nil || v.RuntimeName != runtimeName || v.RuntimeVersion == "" {
		t.Errorf("version: %v, %v", v, err)
	}
	st, err := c.rs.Status(ctx, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, cond := range st.GetStatus().GetConditions() {
		if !cond.Status {
			t.Errorf("condition %s false", cond.Type)
		}
	}
	if n := len(st.GetStatus().GetConditions()); n != 2 {
		t.Errorf("%d conditions, want RuntimeReady and NetworkReady", n)
	}

	_, id := c.runPod(t, "a", "u1")
	if out, _, err := c.rs.ExecSync(ctx, id, []string{"true"}, 0); err != nil || len(out) != 0 {
		t.Errorf("exec in a running container: %q, %v", out, err)
	}
	if err := c.rt.ExitContainer(id, 0); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.rs.ExecSync(ctx, id, []string{"true"}, 0)
	wantCode(t, "exec in an exited container", err, codes.FailedPrecondition)
	_, _, err = c.rs.ExecSync(ctx, "nope", []string{"true"}, 0)
	wantCode(t, "exec in an unknown container", err, codes.NotFound)

	for _, name := range []string{"b", "a"} {
		if _, err := c.images.PullImage(ctx, &runtimeapi.ImageSpec{Image: name}, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if list, err := c.images.ListImages(ctx, &runtimeapi.ImageFilter{Image: &runtimeapi.ImageSpec{Image: "b"}}); err != nil || len(list) != 1 || list[0].Id != "b" || list[0].Size != imageSize {
		t.Errorf("images named b: %v, %v", list, err)
	}
	if err := c.images.RemoveImage(ctx, &runtimeapi.ImageSpec{Image: "b"}); err != nil {
		t.Fatal(err)
	}
	if list, err := c.images.ListImages(ctx, nil); err != nil || len(list) != 1 || list[0].Id != "a" {
		t.Errorf("images after removing b: %v, %v", list, err)
	}

	_, err = c.rs.ContainerStats(ctx, id)
	wantCode(t, "stats", err, codes.Unimplemented)
	if err == nil || !strings.Contains(err.Error(), "embedded runtime has no ContainerStats") {
		t.Errorf("stats: %v, want a message naming the runtime and the method", err)
	}
}

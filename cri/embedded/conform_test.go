package embedded

import (
	"testing"

	"google.golang.org/grpc/codes"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

// The rules a real runtime keeps, so that the agent's mistakes show here too.
func TestConform(t *testing.T) {
	c := start(t)
	ctx := t.Context()
	sandboxID, running := c.runPod(t, "a", "u1")
	sb := sandboxConfig("a", "u1")

	_, err := c.rs.RunPodSandbox(ctx, sb, "")
	wantCode(t, "same sandbox twice", err, codes.AlreadyExists)
	_, err = c.rs.CreateContainer(ctx, sandboxID, containerConfig("app", "u1", 0), sb)
	wantCode(t, "same container twice", err, codes.AlreadyExists)
	_, err = c.rs.CreateContainer(ctx, "nope", containerConfig("app", "u1", 0), sb)
	wantCode(t, "container in unknown sandbox", err, codes.NotFound)
	_, err = c.rs.CreateContainer(ctx, sandboxID, &runtimeapi.ContainerConfig{Metadata: &runtimeapi.ContainerMetadata{Name: "x"}}, sb)
	wantCode(t, "container without image", err, codes.InvalidArgument)
	_, err = c.rs.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{}, "")
	wantCode(t, "sandbox without metadata", err, codes.InvalidArgument)
	wantCode(t, "start twice", c.rs.StartContainer(ctx, running), codes.FailedPrecondition)
	wantCode(t, "start unknown", c.rs.StartContainer(ctx, "nope"), codes.NotFound)
	wantCode(t, "stop unknown", c.rs.StopContainer(ctx, "nope", 0), codes.NotFound)
	_, err = c.rs.ContainerStatus(ctx, "nope", false)
	wantCode(t, "status of unknown container", err, codes.NotFound)
	_, err = c.rs.PodSandboxStatus(ctx, "nope", false)
	wantCode(t, "status of unknown sandbox", err, codes.NotFound)

	created, err := c.rs.CreateContainer(ctx, sandboxID, containerConfig("side", "u1", 0), sb)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.rs.StopContainer(ctx, created, 0); err != nil {
		t.Fatalf("stop of a created container: %v", err)
	}
	if got := c.containerStatus(t, created).State; got != runtimeapi.ContainerState_CONTAINER_CREATED {
		t.Fatalf("stop changed a created container to %v", got)
	}

	// Stopping the sandbox kills what runs in it.
	if err := c.rs.StopPodSandbox(ctx, sandboxID); err != nil {
		t.Fatal(err)
	}
	if st := c.containerStatus(t, running); st.State != runtimeapi.ContainerState_CONTAINER_EXITED || st.ExitCode != killedExitCode || st.Reason != "Error" {
		t.Errorf("after sandbox stop: %v code %d reason %q", st.State, st.ExitCode, st.Reason)
	}
	wantCode(t, "start in a stopped sandbox", c.rs.StartContainer(ctx, created), codes.FailedPrecondition)

	// Removing the sandbox removes its containers; other pods keep theirs.
	_, other := c.runPod(t, "b", "u2")
	if err := c.rs.RemovePodSandbox(ctx, sandboxID); err != nil {
		t.Fatal(err)
	}
	list, err := c.rs.ListContainers(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].Id != other {
		t.Errorf("containers after sandbox removal: %v, want only %s", list, other)
	}
}

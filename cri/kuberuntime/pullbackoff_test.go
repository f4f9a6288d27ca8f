package kuberuntime

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"

	"github.com/podlife/podlife/internal/crifake"
)

// containerdPullError is what containerd answers for an image no registry
// has, as the CRI client returns it.
var containerdPullError = status.Error(codes.NotFound, `failed to pull and unpack image "docker.io/localhost/podlife/busybox:latest": `+
	`failed to resolve reference "docker.io/localhost/podlife/busybox:latest": pull access denied, repository does not exist or may require authorization: `+
	`server message: insufficient_scope: authorization failed`)

// A failed pull is reported once per back-off, in one short Warning event
// naming the container, the image and the gist of the error; the client's
// own log of it is silenced; until the back-off has passed the image is
// not pulled again and the container waits in ImagePullBackOff.
func TestPullFailureReportedOncePerBackoff(t *testing.T) {
	h := newHarness(t, Options{})
	pulls, clientLogs := 0, 0
	failing := true
	h.imgs.OnPull = func(ctx context.Context, _ string, next func() (string, error)) (string, error) {
		pulls++
		if klog.FromContext(ctx).GetSink() != nil {
			clientLogs++
		}
		if failing {
			return "", containerdPullError
		}
		return next()
	}
	pod := crifake.MakePod("p", v1.RestartPolicyAlways, crifake.Ctr{Name: "web", Image: "localhost/podlife/busybox:latest"})
	warnings := func() []string { return h.events.Messages(pod.UID, "Failed") }
	waitingReason := func() string {
		st := h.statuses.last(t, pod.UID).ContainerStatuses[0]
		if st.State.Waiting == nil {
			return ""
		}
		return st.State.Waiting.Reason
	}

	for _, step := range []struct {
		name      string
		advance   time.Duration
		wantPulls int
		wantWarns int
		wantState string
		wantErr   error
	}{
		{name: "first pull fails", wantPulls: 1, wantWarns: 1, wantState: "ErrImagePull"},
		{name: "retry within the back-off", advance: 9 * time.Second, wantPulls: 1, wantWarns: 1, wantState: "ImagePullBackOff", wantErr: ErrImagePullBackOff},
		{name: "back-off over, pull fails again", advance: time.Second, wantPulls: 2, wantWarns: 2, wantState: "ErrImagePull"},
		{name: "the delay doubled", advance: 19 * time.Second, wantPulls: 2, wantWarns: 2, wantState: "ImagePullBackOff", wantErr: ErrImagePullBackOff},
	} {
		h.clock.Step(step.advance)
		_, err := h.syncPod(pod)
		if err == nil || (step.wantErr != nil && !errors.Is(err, step.wantErr)) || len(err.Error()) > 250 {
			t.Errorf("%s: SyncPod error %q, want a short one (wrapping %v)", step.name, err, step.wantErr)
		}
		if pulls != step.wantPulls || len(warnings()) != step.wantWarns || waitingReason() != step.wantState {
			t.Errorf("%s: %d pulls, warnings %q, waiting %q; want %d pulls, %d warnings, waiting %s",
				step.name, pulls, warnings(), waitingReason(), step.wantPulls, step.wantWarns, step.wantState)
		}
	}
	for _, w := range warnings() {
		// The kubelet's text (events.FailedPull), with the gist of the error.
		if len(w) > 250 || strings.Contains(w, "rpc error") ||
			!strings.HasPrefix(w, `Failed to pull image "localhost/podlife/busybox:latest": `) || !strings.Contains(w, "authorization failed") {
			t.Errorf("warning %q: want one short line in the kubelet's form with the image and the gist", w)
		}
	}
	if clientLogs != 0 {
		t.Errorf("%d pulls let the CRI client log the failure", clientLogs)
	}

	failing = false
	h.clock.Step(time.Second)
	h.mustSync(pod)
	if cs := h.statuses.last(t, pod.UID).ContainerStatuses[0]; cs.State.Running == nil {
		t.Errorf("after the back-off: %+v", cs.State)
	}
	if wait, _ := h.s.pulls.Wait(pod.UID, "localhost/podlife/busybox:latest"); wait != 0 {
		t.Errorf("the back-off outlived a successful pull: %s", wait)
	}
}

func TestShortReason(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{containerdPullError, "server message: insufficient_scope: authorization failed"},
		{errors.New("registry down"), "registry down"},
		{status.Error(codes.Unavailable, "dial tcp: lookup registry on 10.0.0.1:53: no such host"), "dial tcp: lookup registry on 10.0.0.1:53: no such host"},
		{errors.New(strings.Repeat("é", 300)), strings.Repeat("é", maxReasonLength-3) + "..."},
	} {
		if got := shortReason(tc.err); got != tc.want {
			t.Errorf("shortReason(%q) = %q, want %q", tc.err, got, tc.want)
		}
	}
}

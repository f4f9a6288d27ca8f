package runtimeclass

import (
	"context"
	"errors"
	"testing"
	"time"

	nodev1api "k8s.io/api/node/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// A class is read once per TTL; a missing one is the kubelet's NotFound,
// not kept, so it shows as soon as it is created; another failure says
// the lookup failed.
func TestRuntimeHandler(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(&nodev1api.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Handler: "runsc"})
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := New(client.NodeV1(), clk, time.Minute)
	reads := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "get" {
				n++
			}
		}
		return n
	}
	setHandler := func(h string) {
		rc := &nodev1api.RuntimeClass{ObjectMeta: metav1.ObjectMeta{Name: "fast"}, Handler: h}
		if _, err := client.NodeV1().RuntimeClasses().Update(ctx, rc, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		before    func()
		class     string
		want      string
		wantErr   string
		wantReads int
	}{
		{"first read", nil, "fast", "runsc", "", 1},
		{"changed, within the TTL: kept", func() { setHandler("kata"); clk.Step(59 * time.Second) }, "fast", "runsc", "", 1},
		{"after the TTL: read again", func() { clk.Step(time.Second) }, "fast", "kata", "", 2},
		{"missing", nil, "nope", "", `runtimeclass.node.k8s.io "nope" not found`, 3},
		{"missing is not kept", nil, "nope", "", `runtimeclass.node.k8s.io "nope" not found`, 4},
		{"API server failing", func() {
			client.PrependReactor("get", "runtimeclasses", func(k8stesting.Action) (bool, runtime.Object, error) {
				return true, nil, errors.New("connection refused")
			})
		}, "other", "", "failed to lookup RuntimeClass other: connection refused", 5},
	} {
		if tc.before != nil {
			tc.before()
		}
		h, err := c.RuntimeHandler(ctx, tc.class)
		switch {
		case tc.wantErr != "" && (err == nil || err.Error() != tc.wantErr):
			t.Errorf("%s: %q, %v; want error %q", tc.name, h, err, tc.wantErr)
		case tc.wantErr == "" && (err != nil || h != tc.want):
			t.Errorf("%s: %q, %v; want %q", tc.name, h, err, tc.want)
		}
		if tc.name == "missing" && !apierrors.IsNotFound(err) {
			t.Errorf("%s: %v is not NotFound", tc.name, err)
		}
		if got := reads(); got != tc.wantReads {
			t.Errorf("%s: %d reads in all; want %d", tc.name, got, tc.wantReads)
		}
	}
}

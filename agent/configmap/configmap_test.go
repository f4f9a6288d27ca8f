package configmap

import (
	"context"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	clocktesting "k8s.io/utils/clock/testing"
)

// A ConfigMap is read once per TTL: a change shows after the TTL; a
// missing one is an IsNotFound error, not kept, so it shows as soon as it
// is created.
func TestTTL(t *testing.T) {
	ctx := context.Background()
	client := fake.NewClientset(&v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"k": "one"}})
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := New(client.CoreV1(), clk, time.Minute)
	reads := func() int {
		n := 0
		for _, a := range client.Actions() {
			if a.GetVerb() == "get" && a.GetResource().Resource == "configmaps" {
				n++
			}
		}
		return n
	}
	update := func(value string) {
		cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string]string{"k": value}}
		if _, err := client.CoreV1().ConfigMaps("ns").Update(ctx, cm, metav1.UpdateOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name      string
		before    func()
		ns, cm    string
		want      string // the value of k; "" for not found
		wantReads int
	}{
		{"first read", nil, "ns", "cfg", "one", 1},
		{"changed, within the TTL: kept", func() { update("two"); clk.Step(59 * time.Second) }, "ns", "cfg", "one", 1},
		{"after the TTL: read again", func() { clk.Step(time.Second) }, "ns", "cfg", "two", 2},
		{"another namespace's is another object", nil, "other", "cfg", "", 3},
		{"not found is not kept", nil, "other", "cfg", "", 4},
	} {
		if tc.before != nil {
			tc.before()
		}
		cm, err := c.ConfigMap(ctx, tc.ns, tc.cm)
		switch {
		case tc.want == "" && !apierrors.IsNotFound(err):
			t.Errorf("%s: %v, %v; want not found", tc.name, cm, err)
		case tc.want != "" && (err != nil || cm.Data["k"] != tc.want):
			t.Errorf("%s: %v, %v; want k=%s", tc.name, cm, err, tc.want)
		}
		if got := reads(); got != tc.wantReads {
			t.Errorf("%s: %d reads in all; want %d", tc.name, got, tc.wantReads)
		}
	}
	clk.Step(time.Minute)
	if _, err := c.ConfigMap(ctx, "other", "cfg"); !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if len(c.entries) != 0 {
		t.Errorf("%d ConfigMaps kept after their TTL; want none", len(c.entries))
	}
}

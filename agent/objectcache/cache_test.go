package objectcache

import (
	"context"
	"errors"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// objects is a fake API with both kinds, reads counted, and an outage
// switch that fails every get.
type objects struct {
	client *fake.Clientset
	down   bool
}

func newObjects(t *testing.T) *objects {
	o := &objects{client: fake.NewClientset()}
	o.client.PrependReactor("get", "*", func(k8stesting.Action) (bool, runtime.Object, error) {
		if o.down {
			return true, nil, errors.New("connection refused")
		}
		return false, nil, nil
	})
	return o
}

// reads are the resourceVersions of the gets of resource so far.
func (o *objects) reads(resource string) []string {
	var rvs []string
	for _, a := range o.client.Actions() {
		if g, ok := a.(k8stesting.GetActionImpl); ok && a.GetResource().Resource == resource {
			rvs = append(rvs, g.GetGetOptions().ResourceVersion)
		}
	}
	return rvs
}

// TestCache walks one fake clock through the cache's life: reads within
// the TTL are kept, a change shows after it, a failed read is not kept
// and is retried, a failed refresh keeps what was read, a deletion shows,
// an immutable object is not read again while used, and what no pod asks
// for goes.
func TestCache(t *testing.T) {
	ctx := context.Background()
	o := newObjects(t)
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	c := New(o.client.CoreV1(), clk, time.Minute)
	cms := o.client.CoreV1().ConfigMaps("ns")
	secrets := o.client.CoreV1().Secrets("ns")
	put := func(name, value string, immutable bool) func() {
		return func() {
			cm := &v1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name}, Data: map[string]string{"k": value}}
			if immutable {
				cm.Immutable = &immutable
			}
			if _, err := cms.Update(ctx, cm, metav1.UpdateOptions{}); apierrors.IsNotFound(err) {
				_, err = cms.Create(ctx, cm, metav1.CreateOptions{})
				if err != nil {
					t.Fatal(err)
				}
			} else if err != nil {
				t.Fatal(err)
			}
		}
	}
	del := func(name string) func() {
		return func() {
			if err := cms.Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
				t.Fatal(err)
			}
		}
	}
	step := func(d time.Duration) func() { return func() { clk.Step(d) } }
	down := func(b bool) func() { return func() { o.down = b } }
	for _, tc := range []struct {
		name      string
		before    []func()
		cm        string
		want      string // the value of k; "notfound", or "error"
		wantReads int    // ConfigMap gets in all
	}{
		{"not there: not found, not kept", nil, "cfg", "notfound", 1},
		{"created: read at once", []func(){put("cfg", "one", false)}, "cfg", "one", 2},
		{"changed, within the TTL: kept", []func(){put("cfg", "two", false), step(59 * time.Second)}, "cfg", "one", 2},
		{"after the TTL: read again", []func(){step(time.Second)}, "cfg", "two", 3},
		{"the API server away at a refresh: the object read before", []func(){step(time.Minute), down(true)}, "cfg", "two", 4},
		{"and the next call tries again", []func(){down(false), put("cfg", "three", false)}, "cfg", "three", 5},
		{"deleted: not found after the TTL", []func(){del("cfg"), step(time.Minute)}, "cfg", "notfound", 6},
		{"a failed first read is an error, not kept", []func(){put("cfg", "four", false), down(true)}, "cfg", "error", 7},
		{"and retried at the next call", []func(){down(false)}, "cfg", "four", 8},
		{"immutable: read once", []func(){put("fixed", "a", true)}, "fixed", "a", 9},
		{"immutable: not read again while used", []func(){step(50 * time.Second)}, "fixed", "a", 9},
		{"immutable: still not", []func(){step(110 * time.Second)}, "fixed", "a", 9},
		{"immutable, unused for two TTLs: gone, read again", []func(){step(2 * time.Minute)}, "fixed", "a", 10},
	} {
		for _, f := range tc.before {
			f()
		}
		cm, err := c.ConfigMap(ctx, "ns", tc.cm)
		switch tc.want {
		case "notfound":
			if !apierrors.IsNotFound(err) || err.Error() != `configmap "`+tc.cm+`" not found` {
				t.Errorf("%s: %v, %v; want not found, as the kubelet says it", tc.name, cm, err)
			}
		case "error":
			if err == nil || apierrors.IsNotFound(err) {
				t.Errorf("%s: %v, %v; want the read's error", tc.name, cm, err)
			}
		default:
			if err != nil || cm.Data["k"] != tc.want {
				t.Errorf("%s: %v, %v; want k=%s", tc.name, cm, err, tc.want)
			}
		}
		if got := len(o.reads("configmaps")); got != tc.wantReads {
			t.Errorf("%s: %d reads in all; want %d", tc.name, got, tc.wantReads)
		}
	}

	// A refresh asks the API server's cache (resourceVersion "0"); a first
	// read asks for the latest.
	rvs := o.reads("configmaps")
	if len(rvs) < 4 || rvs[1] != "" || rvs[2] != "0" {
		t.Errorf("resourceVersions of the reads %q; want \"\" for a first read, \"0\" for a refresh", rvs)
	}

	// Secrets are their own kind, in their own cache.
	if _, err := secrets.Create(ctx, &v1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "cfg"}, Data: map[string][]byte{"k": []byte("s")}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if s, err := c.Secret(ctx, "ns", "cfg"); err != nil || string(s.Data["k"]) != "s" {
		t.Errorf("the Secret named as a ConfigMap: %v, %v; want k=s", s, err)
	}
	clk.Step(2 * time.Minute)
	if _, err := c.ConfigMap(ctx, "ns", "another"); !apierrors.IsNotFound(err) {
		t.Fatal(err)
	}
	if n := len(c.configMaps.entries); n != 0 {
		t.Errorf("%d ConfigMaps kept that no pod asked for in two TTLs; want none", n)
	}
}

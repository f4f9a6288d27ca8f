package services_test

import (
	"context"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/client-go/tools/cache"

	"github.com/podlife/podlife/agent/services"
	"github.com/podlife/podlife/cri/envvars"
)

var _ envvars.ServiceLister = (*services.Cache)(nil)

func svc(namespace, name string) *v1.Service {
	return &v1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Spec: v1.ServiceSpec{ClusterIP: "10.0.0.1"}}
}

// TestCache checks the cache is unsynced until Run lists, then holds
// each namespace's Services, and sees a Service created later.
func TestCache(t *testing.T) {
	client := fake.NewClientset(svc("default", "kubernetes"), svc("ns", "a"), svc("ns", "b"), svc("other", "c"))
	c := services.New(client)
	if c.HasSynced() {
		t.Fatal("HasSynced before Run")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { c.Run(ctx); close(done) }()
	defer func() { cancel(); <-done }()
	waitCtx, waitCancel := context.WithTimeout(ctx, 30*time.Second)
	defer waitCancel()
	if !cache.WaitForCacheSync(waitCtx.Done(), c.HasSynced) {
		t.Fatal("never synced")
	}
	names := func(namespace string) []string {
		list, err := c.Services(namespace)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, s := range list {
			out = append(out, s.Name)
		}
		slices.Sort(out)
		return out
	}
	for _, tc := range []struct {
		namespace string
		want      []string
	}{
		{"default", []string{"kubernetes"}},
		{"ns", []string{"a", "b"}},
		{"other", []string{"c"}},
		{"none", nil},
	} {
		if got := names(tc.namespace); !slices.Equal(got, tc.want) {
			t.Errorf("Services(%q) = %v, want %v", tc.namespace, got, tc.want)
		}
	}
	if _, err := client.CoreV1().Services("ns").Create(ctx, svc("ns", "late"), metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for !slices.Contains(names("ns"), "late") {
		if time.Now().After(deadline) {
			t.Fatalf("Services(ns) = %v, never saw late", names("ns"))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/podlife/podlife/agent/node"
)

// exhausted is a rate limiter that other traffic has used up: every wait
// lasts until its request gives up.
type exhausted struct{ stop chan struct{} }

func (e exhausted) TryAccept() bool { return false }
func (e exhausted) Accept()         { <-e.stop }
func (e exhausted) Stop()           {}
func (e exhausted) QPS() float32    { return 0 }
func (e exhausted) Wait(ctx context.Context) error {
	<-ctx.Done()
	return ctx.Err()
}

// fakeHeartbeatAPI is the part of an API server a node's heartbeat uses:
// the Node (created, read, its status patched) and its Lease (created,
// read, renewed). Any other request counts as other traffic.
type fakeHeartbeatAPI struct {
	mu      sync.Mutex
	objects map[string][]byte // by path
	renews  atomic.Int32
	others  atomic.Int32
}

const (
	nodesPath  = "/api/v1/nodes"
	leasesPath = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases"
)

func (f *fakeHeartbeatAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path := strings.TrimSuffix(r.URL.Path, "/status")
	if !strings.HasPrefix(path, nodesPath) && !strings.HasPrefix(path, leasesPath) {
		f.others.Add(1)
		http.Error(w, "not this fake's", http.StatusNotImplemented)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch r.Method {
	case http.MethodPost:
		var meta struct {
			Metadata metav1.ObjectMeta `json:"metadata"`
		}
		_ = json.Unmarshal(body, &meta)
		path += "/" + meta.Metadata.Name
		f.objects[path] = withVersion(body)
		w.WriteHeader(http.StatusCreated)
	case http.MethodPut:
		f.objects[path] = withVersion(body)
		f.renews.Add(1)
	case http.MethodGet, http.MethodPatch: // a patched status is answered with the Node as it is
		if f.objects[path] == nil {
			gr := schema.GroupResource{Resource: "nodes"}
			if strings.HasPrefix(path, leasesPath) {
				gr = schema.GroupResource{Group: "coordination.k8s.io", Resource: "leases"}
			}
			status := apierrors.NewNotFound(gr, path[strings.LastIndex(path, "/")+1:]).ErrStatus
			status.Kind, status.APIVersion = "Status", "v1"
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(status)
			return
		}
	}
	_, _ = w.Write(f.objects[path])
}

// withVersion is the object in body with a UID and a resource version, as
// the API server stores it.
func withVersion(body []byte) []byte {
	var obj map[string]any
	if err := json.Unmarshal(body, &obj); err != nil {
		panic(fmt.Sprintf("%v: %q", err, body[:min(len(body), 80)]))
	}
	meta, _ := obj["metadata"].(map[string]any)
	if meta == nil {
		meta = map[string]any{}
		obj["metadata"] = meta
	}
	meta["uid"], meta["resourceVersion"] = "uid-1", time.Now().Format(time.RFC3339Nano)
	out, _ := json.Marshal(obj)
	return out
}

// The Lease and the Node status go through a client of their own: with
// the shared client's rate limiter used up by other traffic (pod statuses,
// TokenReviews, events stuck behind it), the node still registers, and its
// Lease is created and renewed.
func TestHeartbeatIgnoresTheSharedClientsLoad(t *testing.T) {
	api := &fakeHeartbeatAPI{objects: map[string][]byte{}}
	srv := httptest.NewServer(api)
	defer srv.Close()
	stop := make(chan struct{})
	defer close(stop)
	clients, err := newAPIClients(&rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}, RateLimiter: exhausted{stop: stop}})
	if err != nil {
		t.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(clients.http.Transport)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	// The other traffic, waiting for the shared limiter.
	for range 20 {
		wg.Go(func() { _, _ = clients.shared.CoreV1().Pods("").List(ctx, metav1.ListOptions{}) })
	}
	nm, err := node.New(node.Config{
		Client: clients.heartbeat, NodeName: "n1",
		Capacity:  v1.ResourceList{},
		Addresses: []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "127.0.0.1"}},
		// Quick renewals, so that the test sees two soon.
		RenewInterval: 50 * time.Millisecond, LeaseDuration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { nm.Run(ctx) })
	// Generous: the renewals come every 50 ms, or, behind the shared
	// limiter, never.
	deadline := time.Now().Add(30 * time.Second)
	for api.renews.Load() < 2 {
		if time.Now().After(deadline) {
			_, registered := nm.Node()
			t.Fatalf("the Lease was renewed %d times in 30 s, want 2 (the Node registered: %v) while the shared client is saturated", api.renews.Load(), registered)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var lease coordinationv1.Lease
	api.mu.Lock()
	err = json.Unmarshal(api.objects[leasesPath+"/n1"], &lease)
	api.mu.Unlock()
	if err != nil || lease.Spec.RenewTime == nil || len(lease.OwnerReferences) != 1 {
		t.Errorf("the Lease: %+v, %v; want it renewed and owned by the Node", lease, err)
	}
	if n := api.others.Load(); n != 0 {
		t.Errorf("%d requests of the shared client reached the API server, want none: its limiter is used up", n)
	}
	// The kubelet API's reviews have a limiter of their own too (the
	// fake answers them 501).
	review := &authenticationv1.TokenReview{Spec: authenticationv1.TokenReviewSpec{Token: "t"}}
	if _, err := clients.reviews.AuthenticationV1().TokenReviews().Create(ctx, review, metav1.CreateOptions{}); err == nil || api.others.Load() != 1 {
		t.Errorf("a TokenReview with the shared client saturated: %v, %d requests reached the API server; want the fake's refusal", err, api.others.Load())
	}
}

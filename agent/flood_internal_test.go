package agent

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"

	"github.com/podlife/podlife/agent/kubeletserver"
	"github.com/podlife/podlife/agent/node"
	"github.com/podlife/podlife/cri/logs"
)

// floodHost is a kubelet API host with no pods.
type floodHost struct{ reg *prometheus.Registry }

var errNoPods = errors.New("no pods here")

func (h floodHost) HealthProblem() string              { return "" }
func (h floodHost) PodList() *v1.PodList               { return &v1.PodList{} }
func (h floodHost) Registry() *prometheus.Registry     { return h.reg }
func (h floodHost) ProbeMetrics() *prometheus.Registry { return prometheus.NewRegistry() }
func (h floodHost) ContainerLog(context.Context, string, string, string, bool) (*logs.ContainerLog, error) {
	return nil, errNoPods
}
func (h floodHost) Exec(context.Context, kubeletserver.PodRef, string, []string, kubeletserver.StreamOptions) (string, error) {
	return "", errNoPods
}
func (h floodHost) Attach(context.Context, kubeletserver.PodRef, string, kubeletserver.StreamOptions) (string, error) {
	return "", errNoPods
}
func (h floodHost) PortForward(context.Context, kubeletserver.PodRef, []int32) (string, error) {
	return "", errNoPods
}
func (h floodHost) Run(context.Context, kubeletserver.PodRef, string, []string) ([]byte, error) {
	return nil, errNoPods
}

// syncBuffer is a log's output, safe for concurrent writes.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) count(substr string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), substr)
}

// leaseRenewals is the fake API server's record of the Lease's renewals.
type leaseRenewals struct {
	mu    sync.Mutex
	times []time.Time
}

func (l *leaseRenewals) add() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.times = append(l.times, time.Now())
}

// maxGap is the longest time between from, the renewals and to.
func (l *leaseRenewals) maxGap(from, to time.Time) (gap time.Duration, renewals int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	last := from
	for _, at := range l.times {
		if at.After(from) && at.Before(to) {
			gap = max(gap, at.Sub(last))
			last = at
			renewals++
		}
	}
	return max(gap, to.Sub(last)), renewals
}

// Issue 30's flood, sized for a test: 1,000 clients, each on connections of
// its own, send 2,000 requests with random bearer tokens to the kubelet
// API of a node whose API server answers TokenReviews in 2 ms. The Lease
// is renewed throughout, every request is refused (401, or 429 past the
// reviews in flight) and counted, the log lines stay a handful and the
// heap does not grow with the requests.
func TestFloodOfRandomTokensLeavesTheLeaseRenewed(t *testing.T) {
	api := &fakeHeartbeatAPI{objects: map[string][]byte{}}
	renewals := &leaseRenewals{}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /apis/authentication.k8s.io/v1/tokenreviews", func(w http.ResponseWriter, r *http.Request) {
		var review authenticationv1.TokenReview
		_ = json.NewDecoder(r.Body).Decode(&review)
		time.Sleep(2 * time.Millisecond)
		review.APIVersion, review.Kind = "authentication.k8s.io/v1", "TokenReview"
		review.Status = authenticationv1.TokenReviewStatus{Authenticated: false, Error: "invalid token"}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(review)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut && strings.HasPrefix(r.URL.Path, leasesPath) {
			renewals.add()
		}
		api.ServeHTTP(w, r)
	})
	srv := httptest.NewServer(mux)
	defer srv.Close()
	restCfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}, QPS: apiQPS, Burst: apiBurst}
	clients, err := newAPIClients(restCfg)
	if err != nil {
		t.Fatal(err)
	}
	defer utilnet.CloseIdleConnectionsFor(clients.http.Transport)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	nm, err := node.New(node.Config{
		Client: clients.heartbeat, NodeName: "n1", Capacity: v1.ResourceList{},
		Addresses:     []v1.NodeAddress{{Type: v1.NodeInternalIP, Address: "127.0.0.1"}},
		RenewInterval: 200 * time.Millisecond, LeaseDuration: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	wg.Go(func() { nm.Run(ctx) })

	auth, err := kubeletserver.BuildAuth(kubeletserver.AuthConfig{Client: clients.reviews, Mode: kubeletserver.ModeWebhook})
	if err != nil {
		t.Fatal(err)
	}
	var logs syncBuffer
	reg := prometheus.NewRegistry()
	ks, err := kubeletserver.Listen(floodHost{reg: reg}, kubeletserver.Config{
		Address: "127.0.0.1", NodeName: "n1", Auth: auth, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
		TLS: kubeletserver.TLSConfig{CertDir: filepath.Join(t.TempDir(), "pki"), Host: "n1"}, MaxOpenConnections: 64,
	})
	if err != nil {
		t.Fatal(err)
	}
	ks.Start()
	defer func() {
		sctx, scancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer scancel()
		ks.Shutdown(sctx)
		ks.Close()
	}()
	for deadline := time.Now().Add(30 * time.Second); renewals.count() == 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the Lease was not renewed in 30 s before the flood")
		}
	}

	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	const clientsN, each = 1000, 2
	start := time.Now()
	codes := make(chan int, clientsN*each)
	var flood sync.WaitGroup
	for range clientsN {
		flood.Go(func() {
			//nolint:gosec // the server's certificate is self-signed; the test is about the flood
			tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
			defer tr.CloseIdleConnections()
			client := &http.Client{Transport: tr, Timeout: time.Minute}
			for range each {
				token := make([]byte, 16)
				_, _ = rand.Read(token)
				req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+ks.Addr()+"/pods", nil)
				req.Header.Set("Authorization", "Bearer "+hex.EncodeToString(token))
				resp, err := client.Do(req)
				if err != nil {
					codes <- 0
					continue
				}
				_, _ = io.Copy(io.Discard, resp.Body)
				_ = resp.Body.Close()
				codes <- resp.StatusCode
			}
		})
	}
	flood.Wait()
	end := time.Now()
	close(codes)
	byCode := map[int]int{}
	for c := range codes {
		byCode[c]++
	}
	if byCode[http.StatusUnauthorized]+byCode[http.StatusTooManyRequests] != clientsN*each {
		t.Errorf("the flood's answers by status: %v; want every one 401 or 429", byCode)
	}
	// The acceptance's bound: the node lifecycle controller waits 40-50 s;
	// the renewals come every 200 ms.
	if gap, n := renewals.maxGap(start, end); gap > 15*time.Second {
		t.Errorf("the Lease went %v without a renewal during the flood (%d renewals in %v); want at most 15 s", gap, n, end.Sub(start))
	}
	var failures float64
	for _, reason := range []string{"unauthorized", "too_many_reviews", "canceled"} {
		failures += testutil.ToFloat64(gatherCounter(t, reg, reason))
	}
	if failures != clientsN*each {
		t.Errorf("podlife_kubelet_api_authentication_failures_total counted %v, want %d", failures, clientsN*each)
	}
	if n, bound := logs.count("authentication failed"), 5+1+int(end.Sub(start)/(10*time.Second)); n > bound {
		t.Errorf("%d log lines for %d failed authentications in %v, want at most %d", n, clientsN*each, end.Sub(start), bound)
	}
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 32<<20 {
		t.Errorf("the heap grew by %d MiB over the flood, want the caches' few", grew>>20)
	}
}

func (l *leaseRenewals) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.times)
}

// gatherCounter is the authentication failures counter of reason in reg.
func gatherCounter(t *testing.T, reg *prometheus.Registry, reason string) prometheus.Collector {
	t.Helper()
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "podlife", Subsystem: "kubelet_api", Name: "authentication_failures_total",
		Help: "Requests to the kubelet API refused before authorization, by reason: unauthorized (no or wrong credentials, or the review failed), too_many_reviews (refused at once, 429), canceled (the client left during the review).",
	}, []string{"reason"})
	var already prometheus.AlreadyRegisteredError
	if err := reg.Register(c); !errors.As(err, &already) {
		t.Fatalf("the kubelet API registered no authentication failures counter: %v", err)
	}
	return already.ExistingCollector.(*prometheus.CounterVec).WithLabelValues(reason)
}

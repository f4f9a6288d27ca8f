package kubeletserver

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	authenticationv1 "k8s.io/api/authentication/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// fakeTokenReviews is an API server's TokenReview endpoint: the token
// "good" is alice's, a token "hang-..." is reviewed until the review's
// request ends, any other is refused with the API server's reason. It counts the reviews by token and
// the hung ones that ended.
type fakeTokenReviews struct {
	mu      sync.Mutex
	reviews map[string]int
	hung    chan string
	ended   chan string
}

func (f *fakeTokenReviews) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var review authenticationv1.TokenReview
	if err := json.NewDecoder(r.Body).Decode(&review); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	token := review.Spec.Token
	f.mu.Lock()
	f.reviews[token]++
	f.mu.Unlock()
	if strings.HasPrefix(token, "hang-") {
		f.hung <- token
		<-r.Context().Done()
		f.ended <- token
		return
	}
	// A refusal says why, as the API server's does.
	review.Status = authenticationv1.TokenReviewStatus{Authenticated: false, Error: "[invalid bearer token, service account token has been invalidated]"}
	if token == "good" {
		review.Status = authenticationv1.TokenReviewStatus{Authenticated: true, User: authenticationv1.UserInfo{Username: "alice"}}
	}
	review.APIVersion, review.Kind = "authentication.k8s.io/v1", "TokenReview"
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(review)
}

func (f *fakeTokenReviews) count(token string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reviews[token]
}

// lockedBuffer is a log's output, safe for the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) lines(substr string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), substr)
}

// listenWithReviews is a kubelet API whose bearer tokens fake reviews, its
// log written to logs.
func listenWithReviews(t *testing.T, fake *fakeTokenReviews, logs io.Writer) *Server {
	t.Helper()
	api := httptest.NewServer(fake)
	t.Cleanup(api.Close)
	client, err := kubernetes.NewForConfig(&rest.Config{Host: api.URL, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	// Reviews that hang last until their request ends, not a timeout.
	auth, err := BuildAuth(AuthConfig{Client: client, Mode: ModeAlwaysAllow, reviewTimeout: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s, err := Listen(newFakeHost(t), Config{
		Address: "127.0.0.1", NodeName: "n1", Auth: auth, Logger: slog.New(slog.NewTextHandler(logs, nil)),
		TLS: TLSConfig{CertDir: filepath.Join(t.TempDir(), "pki"), Host: "n1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		s.Shutdown(ctx)
		s.Close()
	})
	return s
}

// getWithToken is GET /pods with token, on client, ended with ctx.
func getWithToken(ctx context.Context, client *http.Client, s *Server, token string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "https://"+s.Addr()+"/pods", nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp, resp.Body.Close()
}

func testClient(t *testing.T) *http.Client {
	//nolint:gosec // the server's certificate is self-signed; the test is about authentication
	tr := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// Bearer tokens cost the node little: an answer, a refusal too, is
// cached; a review ends when its request does; past maxReviews in flight a
// request with a token not in the cache is refused at once with 429 and a
// Retry-After, while a cached token still gets in. Each refusal is counted.
func TestTokenReviewsAreCachedBoundedAndEndWithTheirRequest(t *testing.T) {
	fake := &fakeTokenReviews{reviews: map[string]int{}, hung: make(chan string, maxReviews), ended: make(chan string, maxReviews)}
	var logs lockedBuffer
	s := listenWithReviews(t, fake, &logs)
	client := testClient(t)
	ctx := t.Context()

	for _, tc := range []struct {
		token string
		want  int
	}{{"good", 200}, {"good", 200}, {"bad", 401}, {"bad", 401}} {
		resp, err := getWithToken(ctx, client, s, tc.token)
		if err != nil || resp.StatusCode != tc.want {
			t.Fatalf("token %q: %v, %v; want %d", tc.token, resp, err, tc.want)
		}
	}
	for _, token := range []string{"good", "bad"} {
		if n := fake.count(token); n != 1 {
			t.Errorf("token %q was reviewed %d times, want once (then cached)", token, n)
		}
	}

	// maxReviews requests whose reviews hang.
	hangCtx, endHung := context.WithCancel(ctx)
	defer endHung()
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range maxReviews {
		wg.Go(func() { _, _ = getWithToken(hangCtx, client, s, fmt.Sprintf("hang-%d", i)) })
	}
	for range maxReviews {
		<-fake.hung
	}
	resp, err := getWithToken(ctx, client, s, "new")
	if err != nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
		t.Errorf("a new token with %d reviews in flight: %v, %v; want 429 with a Retry-After, at once", maxReviews, resp, err)
	}
	if n := fake.count("new"); n != 0 {
		t.Errorf("the refused token was reviewed %d times, want none", n)
	}
	if resp, err := getWithToken(ctx, client, s, "good"); err != nil || resp.StatusCode != 200 {
		t.Errorf("a cached token with every review slot held: %v, %v; want 200", resp, err)
	}

	// The clients give up: their reviews end. Generous: at once, or never
	// while the requests' ends do not reach the reviews (k8s.io/apiserver's
	// cache lets them run 30 s).
	endHung()
	deadline := time.After(20 * time.Second)
	for range maxReviews {
		select {
		case <-fake.ended:
		case <-deadline:
			t.Fatalf("the hung reviews went on 20 s after their requests ended")
		}
	}

	wg.Wait()
	// The hung requests' handlers count them as they return.
	for testutil.ToFloat64(s.authFailures.WithLabelValues("canceled")) != maxReviews {
		select {
		case <-deadline:
			t.Fatalf("the hung requests were not counted in 20 s")
		case <-time.After(10 * time.Millisecond):
		}
	}
	for reason, want := range map[string]float64{"unauthorized": 2, "too_many_reviews": 1} {
		if got := testutil.ToFloat64(s.authFailures.WithLabelValues(reason)); got != want {
			t.Errorf("authentication failures %q: %v, want %v", reason, got, want)
		}
	}
	if n := logs.lines("authentication failed"); n < 2 {
		t.Errorf("%d log lines of failed authentications, want the first ones logged:\n%s", n, logs.buf.String())
	}
}

// A flood of requests with random tokens writes a bounded number of log
// lines (a burst, then one every failureLogEvery) and counts every one in
// the metric.
func TestFailedAuthenticationLogsAreThinned(t *testing.T) {
	fake := &fakeTokenReviews{reviews: map[string]int{}}
	var logs lockedBuffer
	s := listenWithReviews(t, fake, &logs)
	client := testClient(t)
	const clients, each = 10, 20
	start := time.Now()
	var wg sync.WaitGroup
	var refused atomic.Int32
	for c := range clients {
		wg.Go(func() {
			for i := range each {
				resp, err := getWithToken(t.Context(), client, s, fmt.Sprintf("random-%d-%d", c, i))
				if err == nil && (resp.StatusCode == 401 || resp.StatusCode == 429) {
					refused.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if refused.Load() != clients*each {
		t.Fatalf("%d of %d requests with random tokens refused", refused.Load(), clients*each)
	}
	total := testutil.ToFloat64(s.authFailures.WithLabelValues("unauthorized")) + testutil.ToFloat64(s.authFailures.WithLabelValues("too_many_reviews"))
	if total != clients*each {
		t.Errorf("the metric counted %v failures, want %d", total, clients*each)
	}
	// The bound follows from the time the flood took, however slow the
	// machine.
	bound := failureLogBurst + 1 + int(time.Since(start)/failureLogEvery)
	if n := logs.lines("authentication failed"); n > bound || n == 0 {
		t.Errorf("%d log lines for %d failed authentications, want 1 to %d", n, clients*each, bound)
	}
}

package stats_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// scrape is GET /metrics/resource of c as the kubelet API serves it, from
// a registry of its own; anything but a 200 fails the test.
func scrape(t *testing.T, c prometheus.Collector) string {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	rec := httptest.NewRecorder()
	promhttp.HandlerFor(reg, promhttp.HandlerOpts{}).ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics/resource", nil))
	body, err := io.ReadAll(rec.Result().Body)
	if err != nil || rec.Code != http.StatusOK {
		t.Fatalf("scrape: status %d, %v: %s", rec.Code, err, body)
	}
	return string(body)
}

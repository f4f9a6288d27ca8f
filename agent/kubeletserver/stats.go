package kubeletserver

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// StatsProvider is what the stats endpoints serve: GET /stats/summary
// (the kubelet's stats.SummaryProvider, which metrics-server and `kubectl
// top` read) and GET /metrics/resource (the kubelet's resource metrics
// collector). Without one (Config.Stats nil) both answer 503 "stats not
// available": never made-up figures.
type StatsProvider interface {
	// Summary is GET /stats/summary; onlyCPUAndMemory is the kubelet's
	// ?only_cpu_and_memory=true (GetCPUAndMemoryStats), which
	// metrics-server asks for. An error is a 500 with its message.
	Summary(ctx context.Context, onlyCPUAndMemory bool) (*statsv1alpha1.Summary, error)
	// ResourceMetrics collects the series of GET /metrics/resource
	// (node_cpu_usage_seconds_total, container_memory_working_set_bytes,
	// ... as the kubelet's pkg/kubelet/metrics/collectors'
	// resource_metrics.go). The server registers it once, in a registry of
	// its own.
	ResourceMetrics() prometheus.Collector
}

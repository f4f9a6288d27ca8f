package stats

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// SummaryHandler serves GET /stats/summary: the summary as JSON (kubelet:
// pkg/kubelet/server/stats handleSummary). With only_cpu_and_memory=true
// the node and each pod and container keep only their CPU and memory, as
// the kubelet trims them. It does no authentication or authorization: the
// kubelet API server in front of it does.
func (p *Provider) SummaryHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			http.Error(w, "stats summary: only GET", http.StatusMethodNotAllowed)
			return
		}
		onlyCPUAndMemory := false
		if v := r.URL.Query().Get("only_cpu_and_memory"); v != "" {
			b, err := strconv.ParseBool(v)
			if err != nil {
				http.Error(w, "stats summary: query parameter only_cpu_and_memory: "+err.Error(), http.StatusBadRequest)
				return
			}
			onlyCPUAndMemory = b
		}
		s, err := p.Summary(r.Context())
		if err != nil {
			klog.ErrorS(err, "Stats summary")
			http.Error(w, "stats summary: "+err.Error(), http.StatusInternalServerError)
			return
		}
		if onlyCPUAndMemory {
			s = cpuAndMemory(s)
		}
		w.Header().Set("Content-Type", "application/json")
		if err := json.NewEncoder(w).Encode(s); err != nil {
			klog.V(2).InfoS("Stats summary: writing the response", "err", err)
		}
	})
}

// cpuAndMemory is s with only the CPU and memory of the node, its pods and
// their containers (kubelet: summaryProviderImpl.GetCPUAndMemoryStats).
func cpuAndMemory(s *statsapi.Summary) *statsapi.Summary {
	out := &statsapi.Summary{Node: statsapi.NodeStats{
		NodeName: s.Node.NodeName, StartTime: s.Node.StartTime, CPU: s.Node.CPU, Memory: s.Node.Memory,
	}, Pods: make([]statsapi.PodStats, 0, len(s.Pods))}
	for _, pod := range s.Pods {
		trimmed := statsapi.PodStats{PodRef: pod.PodRef, StartTime: pod.StartTime, CPU: pod.CPU, Memory: pod.Memory,
			Containers: make([]statsapi.ContainerStats, 0, len(pod.Containers))}
		for _, c := range pod.Containers {
			trimmed.Containers = append(trimmed.Containers, statsapi.ContainerStats{Name: c.Name, StartTime: c.StartTime, CPU: c.CPU, Memory: c.Memory})
		}
		out.Pods = append(out.Pods, trimmed)
	}
	return out
}

// ResourceMetricsHandler serves GET /metrics/resource: the resource
// metrics in the Prometheus text form, from a registry of their own (no
// global metrics). Like SummaryHandler, it leaves authentication and
// authorization to the server in front of it.
func (p *Provider) ResourceMetricsHandler() http.Handler {
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(resourceCollector{p: p})
	return promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

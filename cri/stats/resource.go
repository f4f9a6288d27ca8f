package stats

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/klog/v2"
	statsapi "k8s.io/kubelet/pkg/apis/stats/v1alpha1"
)

// The resource metrics, named and labelled as the kubelet's
// (pkg/kubelet/metrics/collectors/resource_metrics.go): metrics-server
// reads the node_, container_ and start-time series by these exact names
// and the container, pod and namespace labels.
var (
	nodeCPUUsageDesc = prometheus.NewDesc("node_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the node in core-seconds", nil, nil)
	nodeMemoryUsageDesc = prometheus.NewDesc("node_memory_working_set_bytes",
		"Current working set of the node in bytes", nil, nil)
	containerCPUUsageDesc = prometheus.NewDesc("container_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the container in core-seconds", []string{"container", "pod", "namespace"}, nil)
	containerMemoryUsageDesc = prometheus.NewDesc("container_memory_working_set_bytes",
		"Current working set of the container in bytes", []string{"container", "pod", "namespace"}, nil)
	containerStartTimeDesc = prometheus.NewDesc("container_start_time_seconds",
		"Start time of the container since unix epoch in seconds", []string{"container", "pod", "namespace"}, nil)
	podCPUUsageDesc = prometheus.NewDesc("pod_cpu_usage_seconds_total",
		"Cumulative cpu time consumed by the pod in core-seconds", []string{"pod", "namespace"}, nil)
	podMemoryUsageDesc = prometheus.NewDesc("pod_memory_working_set_bytes",
		"Current working set of the pod in bytes", []string{"pod", "namespace"}, nil)
	// scrape_error is the kubelet's older name of resource_scrape_error;
	// it still serves both.
	scrapeErrorDesc = prometheus.NewDesc("scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
	resourceScrapeErrorDesc = prometheus.NewDesc("resource_scrape_error",
		"1 if there was an error while getting container metrics, 0 otherwise", nil, nil)
)

// scrapeTimeout bounds one scrape's CRI calls: metrics-server gives up on a
// node after 10 s by default.
const scrapeTimeout = 10 * time.Second

// resourceCollector turns a summary into the resource metrics at each
// scrape.
type resourceCollector struct{ p *Provider }

func (c resourceCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		nodeCPUUsageDesc, nodeMemoryUsageDesc, containerCPUUsageDesc, containerMemoryUsageDesc,
		containerStartTimeDesc, podCPUUsageDesc, podMemoryUsageDesc, scrapeErrorDesc, resourceScrapeErrorDesc,
	} {
		ch <- d
	}
}

// Collect samples the node and its pods. Each series carries the time of
// its sample, which metrics-server takes as the point's time. When the pods
// cannot be read the node's series are still there and the scrape error is
// 1; when the node cannot be read either, only the error is.
func (c resourceCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	s, err := c.p.sample(ctx)
	failed := 0.0
	if err != nil || s == nil {
		failed = 1
	}
	ch <- prometheus.MustNewConstMetric(scrapeErrorDesc, prometheus.GaugeValue, failed)
	ch <- prometheus.MustNewConstMetric(resourceScrapeErrorDesc, prometheus.GaugeValue, failed)
	if s == nil {
		klog.ErrorS(err, "Resource metrics: no node stats")
		return
	}
	if err != nil {
		klog.V(2).InfoS("Resource metrics without pods", "err", err)
	}
	cpuSeconds(ch, nodeCPUUsageDesc, s.Node.CPU)
	workingSet(ch, nodeMemoryUsageDesc, s.Node.Memory)
	for _, pod := range s.Pods {
		ref := pod.PodRef
		for _, ctr := range pod.Containers {
			// A container without both its CPU and its memory is left out
			// whole: metrics-server drops the entire pod of a container
			// whose series are incomplete.
			if ctr.CPU == nil || ctr.CPU.UsageCoreNanoSeconds == nil || ctr.Memory == nil || ctr.Memory.WorkingSetBytes == nil {
				continue
			}
			if !ctr.StartTime.IsZero() {
				ch <- prometheus.NewMetricWithTimestamp(ctr.StartTime.Time, prometheus.MustNewConstMetric(
					containerStartTimeDesc, prometheus.GaugeValue,
					float64(ctr.StartTime.UnixNano())/float64(time.Second), ctr.Name, ref.Name, ref.Namespace))
			}
			cpuSeconds(ch, containerCPUUsageDesc, ctr.CPU, ctr.Name, ref.Name, ref.Namespace)
			workingSet(ch, containerMemoryUsageDesc, ctr.Memory, ctr.Name, ref.Name, ref.Namespace)
		}
		cpuSeconds(ch, podCPUUsageDesc, pod.CPU, ref.Name, ref.Namespace)
		workingSet(ch, podMemoryUsageDesc, pod.Memory, ref.Name, ref.Namespace)
	}
}

// cpuSeconds sends the cumulative CPU of s in core-seconds, if it has one.
func cpuSeconds(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsapi.CPUStats, labels ...string) {
	if s == nil || s.UsageCoreNanoSeconds == nil {
		return
	}
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, prometheus.MustNewConstMetric(
		d, prometheus.CounterValue, float64(*s.UsageCoreNanoSeconds)/float64(time.Second), labels...))
}

// workingSet sends the working set of s in bytes, if it has one.
func workingSet(ch chan<- prometheus.Metric, d *prometheus.Desc, s *statsapi.MemoryStats, labels ...string) {
	if s == nil || s.WorkingSetBytes == nil {
		return
	}
	ch <- prometheus.NewMetricWithTimestamp(s.Time.Time, prometheus.MustNewConstMetric(
		d, prometheus.GaugeValue, float64(*s.WorkingSetBytes), labels...))
}

package demo

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/podlife/podlife/trace"
)

// shownMetrics are the families the demo prints.
var shownMetrics = []string{
	"kubelet_desired_pods", "kubelet_active_pods", "kubelet_working_pods",
	"kubelet_restarted_pods_total", "kubelet_orphaned_runtime_pods_total",
	"kubelet_admission_rejections_total", "podlife_transitions_total",
	"podlife_guard_rejections_total",
}

// writeMetrics prints the non-zero samples of the shown families.
func writeMetrics(w io.Writer, g prometheus.Gatherer) error {
	families, err := g.Gather()
	if err != nil {
		return err
	}
	byName := map[string]*dto.MetricFamily{}
	for _, f := range families {
		byName[f.GetName()] = f
	}
	for _, name := range shownMetrics {
		f := byName[name]
		if f == nil {
			continue
		}
		var lines []string
		total := 0.0
		for _, m := range f.GetMetric() {
			v := value(m)
			total += v
			if v == 0 {
				continue
			}
			lines = append(lines, fmt.Sprintf("  %s%s %g", name, labels(m), v))
		}
		if name == "podlife_transitions_total" {
			fmt.Fprintf(w, "  %s (sum over %d rows) %g\n", name, len(lines), total)
			continue
		}
		sort.Strings(lines)
		if len(lines) == 0 {
			lines = []string{fmt.Sprintf("  %s 0", name)}
		}
		fmt.Fprintln(w, strings.Join(lines, "\n"))
	}
	return nil
}

// counter sums every sample of a family.
func (d *demo) counter(name string) float64 {
	families, err := d.agent.Registry().Gather()
	if err != nil {
		return 0
	}
	total := 0.0
	for _, f := range families {
		if f.GetName() == name {
			for _, m := range f.GetMetric() {
				total += value(m)
			}
		}
	}
	return total
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.Counter.GetValue()
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	}
	return 0
}

func labels(m *dto.Metric) string {
	if len(m.GetLabel()) == 0 {
		return ""
	}
	parts := make([]string, 0, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		parts = append(parts, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// checkTrace validates the engine's trace against the lifecycle table with
// the Go checker, as tla/TracePodLifecycle does with TLC.
func checkTrace(w io.Writer, tw *trace.Writer, f *os.File, path string) error {
	if err := tw.Err(); err != nil {
		return fmt.Errorf("writing the trace: %w", err)
	}
	if err := f.Sync(); err != nil {
		return err
	}
	in, err := os.Open(path)
	if err != nil {
		return err
	}
	defer in.Close()
	lines, err := trace.Read(bufio.NewReader(in))
	if err != nil {
		return fmt.Errorf("reading the trace: %w", err)
	}
	if err := trace.Check(lines); err != nil {
		return fmt.Errorf("the trace does not follow the lifecycle table: %w", err)
	}
	fmt.Fprintf(w, "  %d transitions, every one a row of the lifecycle table (trace.Check)\n", len(lines))
	return nil
}

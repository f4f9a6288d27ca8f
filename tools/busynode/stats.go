package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// percentile is the nearest-rank percentile of ds (p in (0, 1]): the
// smallest value at least a fraction p of the values do not exceed, as the
// kubelet's e2e density tests extract the pod startup SLI's percentiles.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return s[max(0, min(i, len(s)-1))]
}

// result is one round of one node: what `busynode run` measures. Times in
// milliseconds, CPU in percent of one CPU, memory in MiB; RemovedMs is -1
// when the runtime still held some of the pods' sandboxes or containers at
// the end of the wait for it.
type result struct {
	Node  string `json:"node"`
	Round int    `json:"round"`
	Pods  int    `json:"pods"`

	StartP50Ms    float64 `json:"startP50Ms"`
	StartP90Ms    float64 `json:"startP90Ms"`
	StartP99Ms    float64 `json:"startP99Ms"`
	AllRunningMs  float64 `json:"allRunningMs"`
	IdleCPUPct    float64 `json:"idleCpuPct"`
	RuntimeCPUPct float64 `json:"runtimeCpuPct"`
	RSSMiB        float64 `json:"rssMiB"`
	HWMMiB        float64 `json:"hwmMiB"`
	DeleteP50Ms   float64 `json:"deleteP50Ms"`
	DeleteP99Ms   float64 `json:"deleteP99Ms"`
	AllGoneMs     float64 `json:"allGoneMs"`
	StoppedMs     float64 `json:"stoppedMs"`
	RemovedMs     float64 `json:"removedMs"`
}

func ms(d time.Duration) float64 { return math.Round(float64(d)/float64(time.Millisecond)*10) / 10 }

// figure is one row of the table: its name, how a round's value is read,
// and its unit.
type figure struct {
	name string
	get  func(result) float64
	unit string
}

var figures = []figure{
	{"create → Running, p50", func(r result) float64 { return r.StartP50Ms }, "ms"},
	{"create → Running, p90", func(r result) float64 { return r.StartP90Ms }, "ms"},
	{"create → Running, p99", func(r result) float64 { return r.StartP99Ms }, "ms"},
	{"create → all Running", func(r result) float64 { return r.AllRunningMs }, "ms"},
	{"idle: node CPU", func(r result) float64 { return r.IdleCPUPct }, "%"},
	{"idle: containerd CPU", func(r result) float64 { return r.RuntimeCPUPct }, "%"},
	{"idle: node RSS", func(r result) float64 { return r.RSSMiB }, "MiB"},
	{"node peak RSS (VmHWM)", func(r result) float64 { return r.HWMMiB }, "MiB"},
	{"delete → gone from API, p50", func(r result) float64 { return r.DeleteP50Ms }, "ms"},
	{"delete → gone from API, p99", func(r result) float64 { return r.DeleteP99Ms }, "ms"},
	{"delete → all gone from API", func(r result) float64 { return r.AllGoneMs }, "ms"},
	{"delete → all stopped in containerd", func(r result) float64 { return r.StoppedMs }, "ms"},
	{"delete → all removed from containerd", func(r result) float64 { return r.RemovedMs }, "ms"},
}

// readResults reads the JSON lines `busynode run` appended.
func readResults(r io.Reader) ([]result, error) {
	var out []result
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var res result
		if err := json.Unmarshal([]byte(line), &res); err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// medianOf is the median of xs (the mean of the middle two for an even
// count); a -1 (not reached) counts as larger than any value, and a median
// that falls on one is -1.
func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	for i, x := range s {
		if x < 0 {
			s[i] = math.Inf(1)
		}
	}
	slices.Sort(s)
	m := s[len(s)/2]
	if len(s)%2 == 0 {
		m = (s[len(s)/2-1] + m) / 2
	}
	if math.IsInf(m, 1) {
		return -1
	}
	return m
}

// writeTable prints, for each figure, the median over rounds of each node
// in nodes' order, and the ratio of the last node's to the first's.
func writeTable(w io.Writer, results []result, nodes []string) error {
	by := map[string][]result{}
	for _, r := range results {
		by[r.Node] = append(by[r.Node], r)
	}
	for _, n := range nodes {
		if len(by[n]) == 0 {
			return fmt.Errorf("no rounds of node %q", n)
		}
	}
	header := "| figure (medians of rounds) |"
	rule := "|---|"
	for _, n := range nodes {
		header += fmt.Sprintf(" %s (%d rounds) |", n, len(by[n]))
		rule += "---|"
	}
	if len(nodes) == 2 {
		header += fmt.Sprintf(" %s / %s |", nodes[1], nodes[0])
		rule += "---|"
	}
	fmt.Fprintln(w, header)
	fmt.Fprintln(w, rule)
	for _, f := range figures {
		line := "| " + f.name + " |"
		var meds []float64
		for _, n := range nodes {
			var xs []float64
			for _, r := range by[n] {
				xs = append(xs, f.get(r))
			}
			m := medianOf(xs)
			meds = append(meds, m)
			line += " " + format(m, f.unit) + " |"
		}
		if len(nodes) == 2 {
			switch {
			case meds[0] > 0 && meds[1] >= 0:
				line += fmt.Sprintf(" %.2f |", meds[1]/meds[0])
			default:
				line += " – |"
			}
		}
		fmt.Fprintln(w, line)
	}
	return nil
}

func format(x float64, unit string) string {
	switch {
	case math.IsNaN(x):
		return "–"
	case x < 0:
		return "not reached"
	case unit == "ms" && x >= 1000:
		return fmt.Sprintf("%.2f s", x/1000)
	case unit == "ms":
		return fmt.Sprintf("%.0f ms", x)
	case unit == "%":
		return fmt.Sprintf("%.1f %%", x)
	default:
		return fmt.Sprintf("%.1f %s", x, unit)
	}
}

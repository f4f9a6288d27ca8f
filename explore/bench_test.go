package explore

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// BenchmarkExplore reports the explorer's rate in states per second on
// bounds that explore in a fraction of a second (one static pod, all grace
// requests); `podlife-dev check` prints the rate on the shipped bounds.
func BenchmarkExplore(b *testing.B) {
	cfg := Config{Name: "bench", Pods: []types.UID{"p1"}, StaticPods: []types.UID{"p1"}, GraceOverrides: []int64{0, 1, 3}, SpecGrace: 2, KillChannels: 1, RuntimePods: true, TerminalPhases: true}
	states := 0
	for b.Loop() {
		res, err := Explore(cfg, Options{})
		if err != nil || res.Violation != nil {
			b.Fatal(err, res.Violation)
		}
		states += res.States
	}
	b.ReportMetric(float64(states)/b.Elapsed().Seconds(), "states/s")
}

package shutdown

import (
	"math"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
)

func TestGroupByPriority(t *testing.T) {
	bands := []Band{{-10, time.Second}, {0, 2 * time.Second}, {1000, 3 * time.Second}, {CriticalPriority, 4 * time.Second}}
	systemBands := []Band{{0, time.Second}, {CriticalPriority, time.Second}, {CriticalPriority + 1000, time.Second}}
	tests := []struct {
		name     string
		priority *int32
		class    string // priorityClassName
		bands    []Band
		want     int32 // the band's priority
	}{
		{name: "no priority counts as 0", priority: nil, want: 0},
		{name: "exactly a band's priority", priority: prio(1000), want: 1000},
		{name: "just below a band", priority: prio(999), want: 0},
		{name: "just above a band", priority: prio(1001), want: 1000},
		{name: "lowest band exactly", priority: prio(-10), want: -10},
		{name: "below the lowest band", priority: prio(-11), want: -10},
		{name: "far below the lowest band", priority: prio(math.MinInt32), want: -10},
		{name: "critical", priority: prio(CriticalPriority), want: CriticalPriority},
		{name: "above the highest band", priority: prio(math.MaxInt32), want: CriticalPriority},
		{name: "one band takes everything below", priority: prio(-5), bands: []Band{{100, time.Second}}, want: 100},
		{name: "one band takes everything above", priority: prio(500), bands: []Band{{100, time.Second}}, want: 100},
		{name: "no priority below the only band", priority: nil, bands: []Band{{100, time.Second}}, want: 100},
		// A static pod never passes the API server's priority admission: the
		// system classes resolve here, other classes count as no priority.
		{name: "system-node-critical", class: "system-node-critical", bands: systemBands, want: CriticalPriority + 1000},
		{name: "system-cluster-critical", class: "system-cluster-critical", bands: systemBands, want: CriticalPriority},
		{name: "an explicit priority wins over the class", priority: prio(5), class: "system-node-critical", bands: systemBands, want: 0},
		{name: "another class counts as no priority", class: "high", bands: systemBands, want: 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := bands
			if tt.bands != nil {
				b = tt.bands
			}
			p := pod("p", tt.priority, nil)
			p.Spec.PriorityClassName = tt.class
			groups := groupByPriority(b, []*v1.Pod{p})
			if len(groups) != len(b) {
				t.Fatalf("%d groups for %d bands", len(groups), len(b))
			}
			for i, g := range groups {
				if g.Band != b[i] {
					t.Errorf("group %d has band %v, want %v", i, g.Band, b[i])
				}
				if got := len(g.pods) == 1; got != (g.Priority == tt.want) {
					t.Errorf("band %d has %d pods; want the pod in band %d", g.Priority, len(g.pods), tt.want)
				}
			}
		})
	}
}

func TestGroupByPriorityKeepsPodOrder(t *testing.T) {
	a, b, c := pod("a", prio(5), nil), pod("b", nil, nil), pod("c", prio(CriticalPriority), nil)
	groups := groupByPriority([]Band{{0, 0}, {CriticalPriority, 0}}, []*v1.Pod{a, c, b})
	if !slices.Equal(groups[0].pods, []*v1.Pod{a, b}) || !slices.Equal(groups[1].pods, []*v1.Pod{c}) {
		t.Errorf("groups = [%v %v], want [[a b] [c]]", names(groups[0].pods), names(groups[1].pods))
	}
}

func names(pods []*v1.Pod) []string {
	var n []string
	for _, p := range pods {
		n = append(n, p.Name)
	}
	return n
}

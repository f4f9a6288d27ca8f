package stats

import (
	"testing"
	"time"
)

func TestCPURatesFromTwoSamples(t *testing.T) {
	t0 := time.Unix(1764000000, 0)
	u := func(v uint64) *uint64 { return &v }
	type sample struct {
		key   string
		at    time.Duration // after t0
		usage uint64
		want  *uint64
	}
	tests := []struct {
		name    string
		samples []sample
	}{
		{"first sample has no rate", []sample{{"c", 0, 5e9, nil}}},
		{"two samples: a quarter core", []sample{{"c", 0, 1e9, nil}, {"c", 2 * time.Second, 1.5e9, u(250e6)}}},
		{"the same sample read twice answers the same", []sample{
			{"c", 0, 1e9, nil}, {"c", time.Second, 2e9, u(1e9)}, {"c", time.Second, 2e9, u(1e9)},
		}},
		{"a counter gone back (a new container) starts over", []sample{
			{"c", 0, 9e9, nil}, {"c", time.Second, 1e9, nil}, {"c", 2 * time.Second, 1.5e9, u(500e6)},
		}},
		{"a sample older than the last is no rate", []sample{{"c", time.Second, 1e9, nil}, {"c", 0, 2e9, nil}}},
		{"keys are apart", []sample{
			{"a", 0, 1e9, nil}, {"b", 0, 1e9, nil}, {"a", time.Second, 3e9, u(2e9)}, {"b", time.Second, 1e9, u(0)},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newCPURates()
			for i, s := range tt.samples {
				got := r.nanoCores(s.key, t0.Add(s.at), s.usage)
				if (got == nil) != (s.want == nil) || got != nil && *got != *s.want {
					t.Errorf("sample %d (%s at +%v, %d): rate %v, want %v", i, s.key, s.at, s.usage, show(got), show(s.want))
				}
			}
		})
	}
}

// A prune forgets what was not sampled since the last one: a container
// that is gone leaves no sample behind, and one sampled stays.
func TestCPURatesPruneForgetsTheGone(t *testing.T) {
	r := newCPURates()
	t0 := time.Unix(1764000000, 0)
	r.nanoCores("gone", t0, 1e9)
	r.nanoCores("stays", t0, 1e9)
	r.prune()
	r.nanoCores("stays", t0.Add(time.Second), 2e9)
	r.prune()
	if _, ok := r.last["gone"]; ok {
		t.Error("the sample of a key not sampled since the last prune is still kept")
	}
	if got := r.nanoCores("stays", t0.Add(2*time.Second), 3e9); got == nil || *got != 1e9 {
		t.Errorf("rate of the kept key %v, want 1e9", show(got))
	}
}

func show(p *uint64) any {
	if p == nil {
		return "none"
	}
	return *p
}

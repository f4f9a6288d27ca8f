package shutdown

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestBands(t *testing.T) {
	const s = time.Second
	tests := []struct {
		name            string
		total, critical time.Duration
		byPriority      []Band
		want            []Band
		wantErr         []string // substrings of the error
	}{
		{name: "nothing configured: disabled"},
		{name: "total and critical", total: 30 * s, critical: 10 * s,
			want: []Band{{0, 20 * s}, {CriticalPriority, 10 * s}}},
		{name: "no critical time keeps an empty critical band", total: 30 * s,
			want: []Band{{0, 30 * s}, {CriticalPriority, 0}}},
		{name: "all time for critical pods", total: 30 * s, critical: 30 * s,
			want: []Band{{0, 0}, {CriticalPriority, 30 * s}}},
		{name: "periods truncated to seconds", total: 2500 * time.Millisecond, critical: 1 * s,
			want: []Band{{0, 1 * s}, {CriticalPriority, 1 * s}}},
		{name: "critical truncated too", total: 3 * s, critical: 1900 * time.Millisecond,
			want: []Band{{0, 1 * s}, {CriticalPriority, 1 * s}}},
		{name: "minimum durations", total: 1 * s, critical: 1 * s,
			want: []Band{{0, 0}, {CriticalPriority, 1 * s}}},
		{name: "negative total", total: -1 * s,
			wantErr: []string{"shutdownGracePeriod -1s must be >= 0"}},
		{name: "negative critical", total: 10 * s, critical: -1 * s,
			wantErr: []string{"shutdownGracePeriodCriticalPods -1s must be >= 0"}},
		{name: "critical above total", total: 10 * s, critical: 11 * s,
			wantErr: []string{"shutdownGracePeriodCriticalPods 11s must be <= shutdownGracePeriod 10s"}},
		{name: "critical without total", critical: 5 * s,
			wantErr: []string{"shutdownGracePeriodCriticalPods 5s must be <= shutdownGracePeriod 0s"}},
		{name: "total below a second", total: 500 * time.Millisecond,
			wantErr: []string{"shutdownGracePeriod 500ms must be either zero or otherwise >= 1s"}},
		{name: "critical below a second", total: 5 * s, critical: 999 * time.Millisecond,
			wantErr: []string{"shutdownGracePeriodCriticalPods 999ms must be either zero or otherwise >= 1s"}},
		{name: "several errors reported together", total: -1 * s, critical: 500 * time.Millisecond,
			wantErr: []string{"shutdownGracePeriod -1s must be >= 0", "shutdownGracePeriodCriticalPods 500ms must be either zero", "must be <= shutdownGracePeriod"}},
		{name: "both forms", total: 30 * s, byPriority: []Band{{0, 10 * s}},
			wantErr: []string{"cannot specify both shutdownGracePeriodByPodPriority and shutdownGracePeriod"}},
		{name: "both forms, critical only", critical: 5 * s, byPriority: []Band{{0, 10 * s}},
			wantErr: []string{"cannot specify both"}},
		{name: "by priority, sorted",
			byPriority: []Band{{100000, 120 * s}, {-5, 10 * s}, {CriticalPriority, 60 * s}, {0, 0}},
			want:       []Band{{-5, 10 * s}, {0, 0}, {100000, 120 * s}, {CriticalPriority, 60 * s}}},
		{name: "by priority, one band", byPriority: []Band{{7, 3 * s}}, want: []Band{{7, 3 * s}}},
		{name: "by priority, duplicate", byPriority: []Band{{10, 1 * s}, {20, 1 * s}, {10, 2 * s}},
			wantErr: []string{"priority 10 appears more than once"}},
		{name: "by priority, negative period", byPriority: []Band{{10, 1 * s}, {20, -1 * s}},
			wantErr: []string{"shutdownGracePeriodByPodPriority[1] (priority 20): period -1s must be a whole number of seconds >= 0"}},
		{name: "by priority, fraction of a second", byPriority: []Band{{10, 1500 * time.Millisecond}},
			wantErr: []string{"shutdownGracePeriodByPodPriority[0] (priority 10): period 1.5s must be a whole number"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := slices.Clone(tt.byPriority)
			got, err := Bands(tt.total, tt.critical, in)
			if !slices.Equal(in, tt.byPriority) {
				t.Errorf("Bands modified its argument: %v", in)
			}
			if len(tt.wantErr) > 0 {
				if err == nil {
					t.Fatalf("Bands = %v, want an error", got)
				}
				for _, w := range tt.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q does not contain %q", err, w)
					}
				}
				return
			}
			if err != nil {
				t.Fatalf("Bands: %v", err)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Bands = %v, want %v", got, tt.want)
			}
		})
	}
}

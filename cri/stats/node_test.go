package stats

import (
	"strings"
	"testing"
	"time"
)

func TestNodeReadsProc(t *testing.T) {
	const kB = 1024
	tests := []struct {
		dir     string
		busy    uint64 // nanoseconds
		ws      uint64
		usage   uint64
		anon    uint64
		wantErr string
	}{
		// busy = user+nice+system+irq+softirq+steal = 13850 ticks of 10 ms
		{dir: "proc", busy: 13850 * 1e7, usage: 6000000 * kB, ws: 5000000 * kB, anon: 2500000 * kB},
		{dir: "proc-later", busy: 14050 * 1e7, usage: 6000000 * kB, ws: 5000000 * kB, anon: 2500000 * kB},
		{dir: "proc-no-btime", wantErr: "proc-no-btime/stat: no aggregate cpu line or no btime"},
		{dir: "proc-short-cpu", wantErr: "proc-short-cpu/stat: the cpu line has 4 fields"},
		{dir: "proc-bad-meminfo", wantErr: `proc-bad-meminfo/meminfo: AnonPages: strconv.ParseUint: parsing "lots"`},
		{dir: "nonexistent", wantErr: "no such file"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			st, err := readProcStat("testdata/" + tt.dir)
			var m meminfo
			if err == nil {
				m, err = readMeminfo("testdata/" + tt.dir)
			}
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.busy != tt.busy || !st.boot.Equal(time.Unix(1764000000, 0)) {
				t.Errorf("stat: busy %d boot %v, want %d and 1764000000", st.busy, st.boot.Unix(), tt.busy)
			}
			if m.total-m.free != tt.usage || m.workingSet() != tt.ws || m.anon != tt.anon {
				t.Errorf("meminfo: usage %d working set %d anon %d, want %d %d %d", m.total-m.free, m.workingSet(), m.anon, tt.usage, tt.ws, tt.anon)
			}
		})
	}
}

// The working set never goes below zero, whatever the kernel's counters
// say at the instant they are read.
func TestWorkingSetClampsAtZero(t *testing.T) {
	if ws := (meminfo{total: 100, free: 90, inactiveFile: 20}).workingSet(); ws != 0 {
		t.Errorf("working set %d, want 0", ws)
	}
}

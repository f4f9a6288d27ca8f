package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of utime and stime in /proc/PID/stat: USER_HZ, which
// Linux fixes at 100 for every architecture's /proc ABI.
const userHZ = 100

// cpuTime is a process's user plus system CPU time, all its threads, from
// /proc/PID/stat (fields 14 and 15).
func cpuTime(pid int) (time.Duration, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseStatCPU(string(data))
}

// parseStatCPU reads utime and stime out of a /proc/PID/stat line. The
// command name (field 2) is in parentheses and may hold spaces and
// parentheses itself, so the fields are counted after its last ")".
func parseStatCPU(line string) (time.Duration, error) {
	end := strings.LastIndexByte(line, ')')
	if end < 0 {
		return 0, fmt.Errorf("no command name in stat line %q", line)
	}
	// After ") ": field 3 (state) is index 0, utime (14) index 11, stime (15) index 12.
	f := strings.Fields(line[end+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat line has %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat field %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}

// memory is a process's resident set now and its peak, in bytes.
type memory struct{ rss, hwm int64 }

// memoryOf reads VmRSS and VmHWM from /proc/PID/status.
func memoryOf(pid int) (memory, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memory{}, err
	}
	return parseStatusMemory(string(data))
}

func parseStatusMemory(status string) (memory, error) {
	var m memory
	found := 0
	for line := range strings.SplitSeq(status, "\n") {
		key, rest, ok := strings.Cut(line, ":")
		if !ok || (key != "VmRSS" && key != "VmHWM") {
			continue
		}
		kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
		if err != nil {
			return memory{}, fmt.Errorf("%s: %w", key, err)
		}
		if key == "VmRSS" {
			m.rss = kb << 10
		} else {
			m.hwm = kb << 10
		}
		found++
	}
	if found != 2 {
		return memory{}, fmt.Errorf("want VmRSS and VmHWM in the status, found %d of them", found)
	}
	return m, nil
}

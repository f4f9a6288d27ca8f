package stats

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// userHZ is the unit of /proc/stat's CPU times: USER_HZ, which Linux fixes
// at 100 for user space on every architecture (sysconf(_SC_CLK_TCK)).
const userHZ = 100

// procStat is what the node's /proc/stat says of its CPU and its start.
type procStat struct {
	// busy is the CPU time of all CPUs spent not idle: user, nice, system,
	// irq, softirq and steal (guest time is counted in user already), in
	// nanoseconds.
	busy uint64
	boot time.Time
}

// readProcStat reads the aggregate "cpu" line and btime of procDir/stat.
func readProcStat(procDir string) (procStat, error) {
	path := filepath.Join(procDir, "stat")
	data, err := os.ReadFile(path)
	if err != nil {
		return procStat{}, err
	}
	var st procStat
	var haveCPU, haveBoot bool
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		switch f[0] {
		case "cpu":
			// cpu user nice system idle iowait irq softirq steal ...
			if len(f) < 9 {
				return procStat{}, fmt.Errorf("%s: the cpu line has %d fields, want at least 9", path, len(f))
			}
			var ticks uint64
			for _, i := range []int{1, 2, 3, 6, 7, 8} {
				v, err := strconv.ParseUint(f[i], 10, 64)
				if err != nil {
					return procStat{}, fmt.Errorf("%s: cpu field %d: %w", path, i, err)
				}
				ticks += v
			}
			st.busy, haveCPU = ticks*uint64(time.Second/userHZ), true
		case "btime":
			if len(f) != 2 {
				return procStat{}, fmt.Errorf("%s: malformed btime line %q", path, sc.Text())
			}
			sec, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				return procStat{}, fmt.Errorf("%s: btime: %w", path, err)
			}
			st.boot, haveBoot = time.Unix(sec, 0), true
		}
	}
	if !haveCPU || !haveBoot {
		return procStat{}, fmt.Errorf("%s: no aggregate cpu line or no btime", path)
	}
	return st, nil
}

// meminfo is what the node's /proc/meminfo says, in bytes.
type meminfo struct {
	total, free, inactiveFile, anon uint64
}

// readMeminfo reads procDir/meminfo.
func readMeminfo(procDir string) (meminfo, error) {
	path := filepath.Join(procDir, "meminfo")
	data, err := os.ReadFile(path)
	if err != nil {
		return meminfo{}, err
	}
	fields := map[string]*uint64{}
	var m meminfo
	for name, dst := range map[string]*uint64{
		"MemTotal": &m.total, "MemFree": &m.free,
		"Inactive(file)": &m.inactiveFile, "AnonPages": &m.anon,
	} {
		fields[name] = dst
	}
	found := 0
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		// "MemTotal:       16318480 kB"
		name, rest, ok := strings.Cut(sc.Text(), ":")
		dst := fields[name]
		if !ok || dst == nil {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return meminfo{}, fmt.Errorf("%s: malformed %s line %q", path, name, sc.Text())
		}
		kb, err := strconv.ParseUint(f[0], 10, 64)
		if err != nil {
			return meminfo{}, fmt.Errorf("%s: %s: %w", path, name, err)
		}
		*dst = kb * 1024
		found++
	}
	if found != len(fields) {
		return meminfo{}, fmt.Errorf("%s: found %d of the fields MemTotal, MemFree, Inactive(file), AnonPages", path, found)
	}
	return m, nil
}

// workingSet is the memory in use less the inactive file pages the kernel
// can drop at once: what cAdvisor calls the working set of the root cgroup,
// and what the eviction manager and metrics-server read.
func (m meminfo) workingSet() uint64 {
	used := m.total - m.free
	if m.inactiveFile > used {
		return 0
	}
	return used - m.inactiveFile
}

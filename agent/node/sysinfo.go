package node

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	v1 "k8s.io/api/core/v1"
)

// hostFiles are where the host's identity is read from, relative to a root
// ("/" on a real host).
var hostFiles = struct {
	machineID, bootID, kernelRelease string
	osRelease                        []string
}{
	machineID:     "etc/machine-id",
	bootID:        "proc/sys/kernel/random/boot_id",
	kernelRelease: "proc/sys/kernel/osrelease", // what uname -r prints
	osRelease:     []string{"etc/os-release", "usr/lib/os-release"},
}

// readSystemInfo returns the NodeSystemInfo of the host under root, as the
// kubelet reports it (through cAdvisor), with the versions given. What it
// cannot read is left empty (machine-id is often missing in containers),
// and the reasons are returned joined.
func readSystemInfo(root, runtimeVersion, agentVersion string) (v1.NodeSystemInfo, error) {
	info := v1.NodeSystemInfo{
		OperatingSystem:         runtime.GOOS,
		Architecture:            runtime.GOARCH,
		ContainerRuntimeVersion: runtimeVersion,
		KubeletVersion:          agentVersion,
		OSImage:                 "Linux", // cAdvisor's default when os-release says nothing
	}
	var errs []error
	readLine := func(rel string) string {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			errs = append(errs, err)
			return ""
		}
		return strings.TrimSpace(string(b))
	}
	info.MachineID = readLine(hostFiles.machineID)
	info.BootID = readLine(hostFiles.bootID)
	info.KernelVersion = readLine(hostFiles.kernelRelease)

	var osErrs []error
	for _, rel := range hostFiles.osRelease {
		b, err := os.ReadFile(filepath.Join(root, rel))
		if err != nil {
			osErrs = append(osErrs, err)
			continue
		}
		osErrs = nil
		if name := prettyName(b); name != "" {
			info.OSImage = name
		}
		break
	}
	errs = append(errs, osErrs...)
	return info, errors.Join(errs...)
}

// prettyName returns PRETTY_NAME of an os-release file (os-release(5)):
// shell-style assignments, values optionally quoted.
func prettyName(osRelease []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(osRelease))
	for sc.Scan() {
		key, value, ok := strings.Cut(strings.TrimSpace(sc.Text()), "=")
		if !ok || key != "PRETTY_NAME" {
			continue
		}
		return unquoteShell(value)
	}
	return ""
}

// unquoteShell undoes the quoting os-release allows: double quotes with
// backslash escapes, or single quotes.
func unquoteShell(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return v[1 : len(v)-1]
	}
	return v
}

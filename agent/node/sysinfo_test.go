package node

import (
	"net"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestReadSystemInfo(t *testing.T) {
	write := func(root, rel, content string) {
		p := filepath.Join(root, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	full := t.TempDir()
	write(full, "etc/machine-id", "0123456789abcdef0123456789abcdef\n")
	write(full, "proc/sys/kernel/random/boot_id", "b0b0b0b0-1111-2222-3333-444455556666\n")
	write(full, "proc/sys/kernel/osrelease", "6.12.48-podlife\n")
	write(full, "etc/os-release", "NAME=\"Debian GNU/Linux\"\nPRETTY_NAME=\"Debian GNU/Linux 13 (trixie)\"\nID=debian\n")
	usrLib := t.TempDir()
	write(usrLib, "usr/lib/os-release", "PRETTY_NAME='Alpine Linux v3.22'\n")

	for _, tc := range []struct {
		name      string
		root      string
		machineID string
		bootID    string
		kernel    string
		osImage   string
		wantErr   bool
	}{
		{name: "all there", root: full, machineID: "0123456789abcdef0123456789abcdef",
			bootID: "b0b0b0b0-1111-2222-3333-444455556666", kernel: "6.12.48-podlife", osImage: "Debian GNU/Linux 13 (trixie)"},
		{name: "os-release in /usr/lib, the rest missing", root: usrLib, osImage: "Alpine Linux v3.22", wantErr: true},
		{name: "nothing", root: t.TempDir(), osImage: "Linux", wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			info, err := readSystemInfo(tc.root, "containerd://2.1.4", "v1.37.2-podlife")
			if (err != nil) != tc.wantErr {
				t.Errorf("error %v, want an error: %v", err, tc.wantErr)
			}
			if info.MachineID != tc.machineID || info.BootID != tc.bootID || info.KernelVersion != tc.kernel || info.OSImage != tc.osImage {
				t.Errorf("got machine %q boot %q kernel %q os %q", info.MachineID, info.BootID, info.KernelVersion, info.OSImage)
			}
			if info.ContainerRuntimeVersion != "containerd://2.1.4" || info.KubeletVersion != "v1.37.2-podlife" ||
				info.OperatingSystem != runtime.GOOS || info.Architecture != runtime.GOARCH {
				t.Errorf("versions or platform: %+v", info)
			}
		})
	}
}

func TestPrettyName(t *testing.T) {
	for in, want := range map[string]string{
		"PRETTY_NAME=\"Ubuntu 24.04.3 LTS\"\n":          "Ubuntu 24.04.3 LTS",
		"ID=x\nPRETTY_NAME='Fedora Linux 42'\n":         "Fedora Linux 42",
		"PRETTY_NAME=Plain\n":                           "Plain",
		"PRETTY_NAME=\"With \\\"quotes\\\"\"\n":         `With "quotes"`,
		"NAME=NoPretty\n":                               "",
		"  PRETTY_NAME=\"indented\"  \n# PRETTY_NAME=x": "indented",
	} {
		if got := prettyName([]byte(in)); got != want {
			t.Errorf("%q: got %q, want %q", in, got, want)
		}
	}
}

func TestFirstGlobalUnicast(t *testing.T) {
	ipnet := func(s string) net.Addr {
		ip, n, err := net.ParseCIDR(s)
		if err != nil {
			t.Fatal(err)
		}
		n.IP = ip
		return n
	}
	for _, tc := range []struct {
		addrs []net.Addr
		want  string
	}{
		{[]net.Addr{ipnet("127.0.0.1/8"), ipnet("::1/128"), ipnet("fe80::1/64"), ipnet("fd00::5/64"), ipnet("192.168.1.7/24")}, "192.168.1.7"},
		{[]net.Addr{ipnet("127.0.0.1/8"), ipnet("fd00::5/64")}, "fd00::5"},
		{[]net.Addr{ipnet("127.0.0.1/8"), ipnet("169.254.1.1/16")}, ""},
	} {
		ip, err := firstGlobalUnicast(tc.addrs)
		if tc.want == "" {
			if err == nil {
				t.Errorf("%v: got %v, want no address", tc.addrs, ip)
			}
			continue
		}
		if err != nil || ip.String() != tc.want {
			t.Errorf("%v: got %v, %v, want %s", tc.addrs, ip, err, tc.want)
		}
	}
}

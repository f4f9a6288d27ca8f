package config_test

import (
	"strings"
	"testing"

	"github.com/podlife/podlife/agent/config"
)

// Where the servers listen, from the kubelet's address and readOnlyPort
// and from podlife's deprecated forms, each of which gets a warning that
// says what to write instead.
func TestServingAddresses(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		address, bind        string
		readOnlyPort         int
		wantIP, wantReadOnly string
		wantDeprecations     []string // parts of the warnings
		warnings             int
	}{
		{name: "defaults: every interface, read-only port off", address: config.DefaultAddress, wantIP: "0.0.0.0"},
		{name: "empty address is the kubelet's default", address: "", readOnlyPort: 10255, wantIP: "0.0.0.0", wantReadOnly: "0.0.0.0:10255"},
		{name: "read-only port on address", address: "0.0.0.0", readOnlyPort: 10255, wantIP: "0.0.0.0", wantReadOnly: "0.0.0.0:10255"},
		{name: "loopback", address: "127.0.0.1", readOnlyPort: 10255, wantIP: "127.0.0.1", wantReadOnly: "127.0.0.1:10255"},
		{name: "IPv6", address: "::", readOnlyPort: 10255, wantIP: "::", wantReadOnly: "[::]:10255"},
		{name: "deprecated host:port address", address: "127.0.0.1:10255", wantIP: "0.0.0.0", wantReadOnly: "127.0.0.1:10255",
			wantDeprecations: []string{`address "127.0.0.1:10255" (--address) as host:port of the read-only endpoint is deprecated`, `write address "127.0.0.1" (--address) and readOnlyPort 10255`}, warnings: 1},
		{name: "deprecated bindAddress", address: "0.0.0.0", bind: "10.0.0.7", readOnlyPort: 10255, wantIP: "10.0.0.7", wantReadOnly: "10.0.0.7:10255",
			wantDeprecations: []string{`bindAddress "10.0.0.7" (--bind-address) is deprecated`, `write address "10.0.0.7"`}, warnings: 1},
		{name: "both deprecated forms", address: "localhost:10255", bind: "10.0.0.7", wantIP: "10.0.0.7", wantReadOnly: "localhost:10255",
			wantDeprecations: []string{`address "localhost:10255"`, `bindAddress "10.0.0.7"`}, warnings: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := config.Default()
			c.Address, c.BindAddress, c.ReadOnlyPort = tc.address, tc.bind, tc.readOnlyPort
			if err := c.Validate(); err != nil {
				t.Fatal(err)
			}
			if got := c.ServingIP(); got != tc.wantIP {
				t.Errorf("ServingIP %q, want %q", got, tc.wantIP)
			}
			if got := c.ReadOnlyAddress(); got != tc.wantReadOnly {
				t.Errorf("ReadOnlyAddress %q, want %q", got, tc.wantReadOnly)
			}
			got := c.Deprecations()
			if len(got) != tc.warnings {
				t.Errorf("deprecations %q, want %d", got, tc.warnings)
			}
			joined := strings.Join(got, "\n")
			for _, w := range tc.wantDeprecations {
				if !strings.Contains(joined, w) {
					t.Errorf("deprecations %q do not say %q", got, w)
				}
			}
		})
	}
}

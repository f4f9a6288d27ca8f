package node

import (
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// HostIPs picks the kubelet's: an InternalIP per family before any
// ExternalIP, the first family found first; a name is no IP.
func TestHostIPs(t *testing.T) {
	internal := func(a string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeInternalIP, Address: a} }
	external := func(a string) v1.NodeAddress { return v1.NodeAddress{Type: v1.NodeExternalIP, Address: a} }
	hostname := v1.NodeAddress{Type: v1.NodeHostName, Address: "vm"}
	for _, tc := range []struct {
		name      string
		addresses []v1.NodeAddress
		want      []string
	}{
		{"internal", []v1.NodeAddress{internal("192.0.2.2"), hostname}, []string{"192.0.2.2"}},
		{"internal before external", []v1.NodeAddress{external("198.51.100.1"), internal("192.0.2.2")}, []string{"192.0.2.2"}},
		{"one per family", []v1.NodeAddress{internal("2001:db8::2"), internal("192.0.2.2"), internal("192.0.2.3")}, []string{"2001:db8::2", "192.0.2.2"}},
		{"external fills a missing family", []v1.NodeAddress{internal("192.0.2.2"), external("2001:db8::9")}, []string{"192.0.2.2", "2001:db8::9"}},
		{"no IP", []v1.NodeAddress{hostname}, nil},
	} {
		if got := HostIPs(tc.addresses); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

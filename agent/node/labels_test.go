package node

import (
	"slices"
	"testing"
)

func TestForbiddenLabels(t *testing.T) {
	for _, tc := range []struct {
		labels    map[string]string
		forbidden []string
	}{
		{map[string]string{"team": "a", "example.com/rack": "r1"}, nil},
		{map[string]string{"kubernetes.io/hostname": "x", "topology.kubernetes.io/zone": "z", "node.kubernetes.io/instance-type": "m"}, nil},
		{map[string]string{"node-role.kubernetes.io/worker": "", "kubelet.kubernetes.io/x": "y", "foo.node.kubernetes.io/y": "z"}, []string{"node-role.kubernetes.io/worker"}},
		{map[string]string{"node-restriction.kubernetes.io/secure": "1", "k8s.io/x": "1", "sub.k8s.io/y": "1"},
			[]string{"k8s.io/x", "node-restriction.kubernetes.io/secure", "sub.k8s.io/y"}},
	} {
		if got := forbiddenLabels(tc.labels); !slices.Equal(got, tc.forbidden) {
			t.Errorf("%v: forbidden %v, want %v", tc.labels, got, tc.forbidden)
		}
	}
}

func TestOwnLabelsOverride(t *testing.T) {
	got := OwnLabels("n1", map[string]string{"kubernetes.io/hostname": "custom", "team": "a"})
	if got["kubernetes.io/hostname"] != "custom" || got["team"] != "a" || got["kubernetes.io/os"] == "" || got["kubernetes.io/arch"] == "" {
		t.Errorf("labels %v: want the extra labels over the defaults", got)
	}
}

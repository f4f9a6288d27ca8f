package node

import (
	"strings"
	"testing"
)

func TestParseTaints(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "", want: ""},
		{in: "node-role.kubernetes.io/control-plane:NoSchedule", want: "node-role.kubernetes.io/control-plane:NoSchedule"},
		{in: "a=b:NoExecute, c:PreferNoSchedule", want: "a=b:NoExecute,c:PreferNoSchedule"},
		{in: "a=b", err: "want key[=value]:Effect"},
		{in: "a=b:Sometimes", err: `effect "Sometimes"`},
		{in: "bad key:NoSchedule", err: "taint bad key=:NoSchedule"},
		{in: "a=" + strings.Repeat("v", 64) + ":NoSchedule", err: "must be no more than 63"},
	}
	for _, tt := range tests {
		taints, err := ParseTaints(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want one containing %q", tt.in, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("%q: %v", tt.in, err)
		case tt.err == "" && FormatTaints(taints) != tt.want:
			t.Errorf("%q read back as %q, want %q", tt.in, FormatTaints(taints), tt.want)
		}
	}
}

package envvars

import "testing"

// The cases of the kubelet's own expansion tests that matter: $$ escapes,
// unknown references stay, an unclosed one stays, a lone $ stays.
func TestExpand(t *testing.T) {
	vars := map[string]string{"VAR_A": "A", "VAR_B": "B", "VAR_EMPTY": "", "VAR_REF": "$(VAR_A)"}
	for _, tc := range []struct{ in, want string }{
		{"", ""},
		{"plain", "plain"},
		{"$(VAR_A)", "A"},
		{"___$(VAR_A)___", "___A___"},
		{"$(VAR_A)$(VAR_B)", "AB"},
		{"$(VAR_A)-$(VAR_EMPTY)-$(VAR_B)", "A--B"},
		{"$(UNKNOWN)", "$(UNKNOWN)"},
		{"$(VAR_A)$(UNKNOWN)", "A$(UNKNOWN)"},
		{"$$(VAR_A)", "$(VAR_A)"},
		{"$$$(VAR_A)", "$A"},
		{"$$$$(VAR_A)", "$$(VAR_A)"},
		{"$$", "$"},
		{"$", "$"},
		{"a$", "a$"},
		{"$VAR_A", "$VAR_A"},
		{"$(VAR_A", "$(VAR_A"},
		{"$(VAR_A$(VAR_B)", "$(VAR_A$(VAR_B)"},
		{"$()", "$()"},
		{"$(VAR_REF)", "$(VAR_A)"}, // a value is not expanded again
		{"$(VAR_A)b)", "Ab)"},
		{"x$(VAR_A)y$$z", "xAy$z"},
	} {
		if got := expand(tc.in, vars); got != tc.want {
			t.Errorf("expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := ExpandAll(nil, vars); got != nil {
		t.Errorf("expandAll(nil) = %q", got)
	}
}

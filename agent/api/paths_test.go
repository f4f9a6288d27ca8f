package api

import "testing"

func TestDefaultRootDir(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		euid            int
		stateHome, home string
		want            string
	}{
		{"root", 0, "/home/r/.state", "/root", "/var/lib/podlife"},
		{"user with XDG_STATE_HOME", 1000, "/home/u/.state", "/home/u", "/home/u/.state/podlife"},
		{"user without XDG_STATE_HOME", 1000, "", "/home/u", "/home/u/.local/state/podlife"},
		{"relative XDG_STATE_HOME is ignored", 1000, "state", "/home/u", "/home/u/.local/state/podlife"},
		{"user without a home", 1000, "", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := defaultRootDir(tc.euid, tc.stateHome, tc.home); got != tc.want {
				t.Errorf("defaultRootDir = %q, want %q", got, tc.want)
			}
		})
	}
}

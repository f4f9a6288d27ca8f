package podtable

import (
	"testing"

	"k8s.io/apimachinery/pkg/types"
)

// The status table's UID column tells the listed pods apart with as few
// characters as it can, from the start or, failing that, from the end.
func TestShortUIDs(t *testing.T) {
	tests := []struct {
		name string
		uids []types.UID
		want []string
	}{
		{"random UIDs: their first 8 characters",
			[]types.UID{"8f14e45f-ceea-467f-a8e5-3c9b0c4d5e6f", "c9f0f895-fb98-4b91-99f5-1a2b3c4d5e6f"},
			[]string{"8f14e45f", "c9f0f895"}},
		{"UIDs written by hand share their start: their end",
			[]types.UID{"0b6e3c5a-0000-4000-8000-000000000001", "0b6e3c5a-0000-4000-8000-000000000002"},
			[]string{"…00000001", "…00000002"}},
		{"neither 8 first nor 8 last tell them apart: more of the start",
			[]types.UID{"aaaaaaaa1bbbbbbbb", "aaaaaaaa2bbbbbbbb"},
			[]string{"aaaaaaaa1", "aaaaaaaa2"}},
		{"one UID twice is no clash", []types.UID{"8f14e45f-ceea", "8f14e45f-ceea"}, []string{"8f14e45f", "8f14e45f"}},
		{"short UIDs are whole", []types.UID{"a", "web"}, []string{"a", "web"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			short := shortUIDs(tt.uids)
			for i, u := range tt.uids {
				if got := short(u); got != tt.want[i] {
					t.Errorf("short(%s) = %q, want %q", u, got, tt.want[i])
				}
			}
		})
	}
}

package jsonline_test

import (
	"encoding/json"
	"testing"

	"github.com/podlife/podlife/internal/jsonline"
)

// AppendString writes what encoding/json writes (with SetEscapeHTML off: a
// trace line is not embedded in HTML).
func TestAppendStringIsJSON(t *testing.T) {
	for _, s := range []string{
		"", "web_default", "0b5a2c47-8f61-4c1e-9d3a-2f7e6b1c9a04", `a"b\c`, "tab\tnew\nline\rcr",
		"\x00\x01\x1f\x7f", "héllo wörld ✓", "bad \xff utf8 \xc3", "<&>",
	} {
		got := string(jsonline.AppendString([]byte("x"), s))[1:]
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		var back string
		if err := json.Unmarshal([]byte(got), &back); err != nil {
			t.Errorf("AppendString(%q) = %s, not JSON: %v", s, got, err)
			continue
		}
		var wantBack string
		if err := json.Unmarshal(want, &wantBack); err != nil {
			t.Fatal(err)
		}
		if back != wantBack {
			t.Errorf("AppendString(%q) reads back as %q; encoding/json's as %q", s, back, wantBack)
		}
	}
}

package explore

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/trace"
)

var update = flag.Bool("update", false, "rewrite ../trace/testdata/explorer-*.ndjson")

// TestExplorerTraces records, as traces for TLC's trace validation, the
// behaviours the explorer finds to its deepest states (one static pod, one
// ordinary pod). Every trace passes trace.Check; trace/testdata keeps them.
func TestExplorerTraces(t *testing.T) {
	for _, tc := range []struct {
		name   string
		static []types.UID
	}{{"explorer-static", []types.UID{"p1"}}, {"explorer-ordinary", nil}} {
		cfg := Config{Name: tc.name, Pods: []types.UID{"p1"}, StaticPods: tc.static, GraceOverrides: []int64{0, 1}, SpecGrace: 2, KillChannels: 1, RuntimePods: true, TerminalPhases: true}
		res, err := Explore(cfg, Options{SkipLiveness: true})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		if err := TraceOf(cfg, res.Deepest(), &buf); err != nil {
			t.Fatal(err)
		}
		lines, err := trace.Read(bytes.NewReader(buf.Bytes()))
		if err != nil {
			t.Fatal(err)
		}
		if err := trace.Check(lines); err != nil {
			t.Fatalf("%s: the explorer's behaviour fails the trace check: %v", tc.name, err)
		}
		path := filepath.Join("..", "trace", "testdata", tc.name+".ndjson")
		if *update {
			if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if want, err := os.ReadFile(path); err != nil || !bytes.Equal(want, buf.Bytes()) {
			t.Errorf("%s differs from the explorer's behaviour (go test ./explore -run TestExplorerTraces -update): %v", path, err)
		}
	}
}

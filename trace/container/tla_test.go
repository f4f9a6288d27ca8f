package container_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TLC on the committed traces, through tools/tlc.sh as CI runs it: every
// trace of testdata/ must be accepted, every one of testdata/corrupt
// rejected, with the reason the table of corruptions names.

// tlcSh runs tools/tlc.sh with the container trace config and the files;
// it skips without TLA2TOOLS_JAR.
func tlcSh(t *testing.T, mode string, files []string) (string, error) {
	t.Helper()
	if os.Getenv("TLA2TOOLS_JAR") == "" {
		t.Skip("TLA2TOOLS_JAR is not set: skipping the TLC runs on the container traces (export TLA2TOOLS_JAR=/path/to/tla2tools.jar)")
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--trace-config", "TraceContainerLifecycle", mode}
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			t.Fatal(err)
		}
		args = append(args, abs)
	}
	// A bound for a stuck JVM, not a timing assertion.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(root, "tools", "tlc.sh"), args...)
	cmd.Dir = root
	out, err := cmd.CombinedOutput()
	return string(out), err
}

func TestTLCAcceptsTraces(t *testing.T) {
	var files []string
	for _, name := range traceNames() {
		files = append(files, filepath.Join("testdata", name+".ndjson"))
	}
	out, err := tlcSh(t, "--trace", files)
	if err != nil {
		t.Fatalf("tools/tlc.sh --trace: %v\n%s", err, out)
	}
	for _, name := range traceNames() {
		if !strings.Contains(out, "TraceContainerLifecycle["+name+".ndjson]: accepted") {
			t.Errorf("TLC did not accept %s.ndjson:\n%s", name, out)
		}
	}
}

func TestTLCRejectsCorruptTraces(t *testing.T) {
	var files []string
	for _, c := range corruptions {
		files = append(files, filepath.Join("testdata", "corrupt", c.name+".ndjson"))
	}
	out, err := tlcSh(t, "--trace-reject", files)
	if err != nil {
		t.Errorf("tools/tlc.sh --trace-reject: %v", err)
	}
	said := map[string]string{}
	re := regexp.MustCompile(`(?m)^tlc: TraceContainerLifecycle\[([\w-]+)\.ndjson\]: rejected as expected: (.*)$`)
	for _, m := range re.FindAllStringSubmatch(out, -1) {
		said[m[1]] = m[2]
	}
	for _, c := range corruptions {
		s, ok := said[c.name]
		switch {
		case !ok:
			t.Errorf("%s.ndjson: TLC did not reject it", c.name)
		case !strings.Contains(s, c.tlcSays):
			t.Errorf("%s.ndjson: TLC says %q, want it to say %q", c.name, s, c.tlcSays)
		}
	}
	if t.Failed() {
		t.Logf("tools/tlc.sh said:\n%s", out)
	}
}

// TestTraceModuleReadsTheRecordersFields: the fields the trace module
// requires of a line are the ones a Recorder writes (params, before and
// after are checked against the generated table's records by the module
// itself).
func TestTraceModuleReadsTheRecordersFields(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "tla", "TraceContainerLifecycle.tla"))
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?m)^LineFields == \{(.*)\}$`).FindSubmatch(src)
	if m == nil {
		t.Fatal("TraceContainerLifecycle.tla: no LineFields == {...} line")
	}
	var inModule []string
	for _, f := range strings.Split(string(m[1]), ",") {
		inModule = append(inModule, strings.Trim(strings.TrimSpace(f), `"`))
	}
	written := jsonKeys(t, string(corruptText(t, corruptions[0])))
	slices.Sort(inModule)
	slices.Sort(written)
	if !slices.Equal(inModule, written) {
		t.Errorf("TraceContainerLifecycle.tla's LineFields are %v; a Recorder writes %v", inModule, written)
	}
}

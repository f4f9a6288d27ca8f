package container_test

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cfsm "github.com/podlife/podlife/fsm/container"
	speccontainer "github.com/podlife/podlife/spec/container"
	ctrace "github.com/podlife/podlife/trace/container"
)

// The traces in testdata/ are random histories of the pod model (see
// model_test.go) recorded by a Recorder. TestTraces records each again,
// checks it with Check and compares it with the committed file; run
//
//	go test ./trace/container -run 'TestTraces|TestCorruptTraces' -update
//
// to rewrite the files (and the corrupted ones) after a change of the table.
var update = flag.Bool("update", false, "rewrite trace/container/testdata from the model's random histories")

var (
	initC     = ctrSpec{name: "init", kind: cfsm.ContainerKindInit, policy: cfsm.RestartPolicyOnFailure, codes: []cfsm.ExitCode{cfsm.ExitCodeZero, cfsm.ExitCodeOther}}
	proxy     = ctrSpec{name: "proxy", kind: cfsm.ContainerKindSidecar, policy: cfsm.RestartPolicyAlways, codes: []cfsm.ExitCode{cfsm.ExitCodeOther}}
	logger    = ctrSpec{name: "logger", kind: cfsm.ContainerKindSidecar, policy: cfsm.RestartPolicyAlways, codes: []cfsm.ExitCode{cfsm.ExitCodeZero}}
	web       = ctrSpec{name: "web", kind: cfsm.ContainerKindRegular, policy: cfsm.RestartPolicyAlways, codes: []cfsm.ExitCode{cfsm.ExitCodeZero, cfsm.ExitCodeOther}}
	webKilled = ctrSpec{name: "web", kind: cfsm.ContainerKindRegular, policy: cfsm.RestartPolicyAlways, codes: []cfsm.ExitCode{cfsm.ExitCodeOther, cfsm.ExitCodeNone, cfsm.ExitCodeKilled}}
	debug     = ctrSpec{name: "debug", kind: cfsm.ContainerKindEphemeral, policy: cfsm.RestartPolicyNever} // a shell that runs until it is killed
	job       = ctrSpec{name: "job", kind: cfsm.ContainerKindRegular, policy: cfsm.RestartPolicyNever, rule: true, codes: []cfsm.ExitCode{cfsm.ExitCodeZero, cfsm.ExitCodeRule, cfsm.ExitCodeOther}}
)

var scenarios = []struct {
	name  string
	seed  uint64
	steps int
	pods  []*podSpec
}{
	// Sidecars and an init container, with probes, spec changes, two
	// sandbox deaths and the pod's deletion.
	{"sidecars", 10, 250, []*podSpec{{uid: "uid-sidecars", ctrs: []ctrSpec{initC, proxy, logger, web, job},
		maxSandbox: 2, specChanges: true, probes: true, terminations: true, terminateAfter: 180, dieAfter: 60}}},
	// A pod with restartPolicy Never: nothing restarts, a dead sandbox is
	// recreated only if nothing ran; an ephemeral container.
	{"never", 1, 150, []*podSpec{{uid: "uid-never", podNever: true, maxSandbox: 2, terminations: true, terminateAfter: 40, probes: true, specChanges: true, ctrs: []ctrSpec{
		{name: "setup", kind: cfsm.ContainerKindInit, policy: cfsm.RestartPolicyNever, codes: []cfsm.ExitCode{cfsm.ExitCodeZero, cfsm.ExitCodeOther}},
		{name: "main", kind: cfsm.ContainerKindRegular, policy: cfsm.RestartPolicyNever, codes: []cfsm.ExitCode{cfsm.ExitCodeZero, cfsm.ExitCodeOther}},
		{name: "debug", kind: cfsm.ContainerKindEphemeral, policy: cfsm.RestartPolicyNever, codes: []cfsm.ExitCode{cfsm.ExitCodeZero}},
	}}}},
	// Three pods interleaved in one trace, one of them through three
	// sandbox deaths (beyond the model's GenValues, which Fire does not
	// bound); its web container also reports exits without a code of its
	// own (None, Killed), which the model's runtime does not.
	{"pods", 11, 300, []*podSpec{
		{uid: "uid-a", ctrs: []ctrSpec{initC, webKilled}, maxSandbox: 3, probes: true, specChanges: true, terminations: true, terminateAfter: 220, dieAfter: 50},
		{uid: "uid-b", ctrs: []ctrSpec{proxy, job}, maxSandbox: 1, specChanges: true, terminations: true, terminateAfter: 200},
		{uid: "uid-c", ctrs: []ctrSpec{web, job}, maxSandbox: 1, probes: true, specChanges: true, dieAfter: 100},
	}},
	// Two pods recorded as a plan records them (podSpec.plan): decisions
	// in syncs, exits and startup successes observed between them.
	{"plan", 9, 200, []*podSpec{
		{uid: "uid-plan-a", ctrs: []ctrSpec{initC, proxy, web, job}, maxSandbox: 2, probes: true, specChanges: true,
			terminations: true, terminateAfter: 150, dieAfter: 40, plan: true},
		{uid: "uid-plan-b", ctrs: []ctrSpec{initC, web}, maxSandbox: 1, probes: true, dieAfter: 20, plan: true},
	}},
	// A pod deleted while its containers run: regular containers are
	// stopped first, then the sidecars in reverse order; an ephemeral
	// container, whose spec cannot change.
	{"terminate", 11, 150, []*podSpec{{uid: "uid-terminate", ctrs: []ctrSpec{proxy, logger, web, job, debug},
		probes: true, specChanges: true, terminations: true, terminateAfter: 80}}},
}

// traceNames are the committed traces: the scenarios and the script.
func traceNames() []string {
	names := []string{"script"}
	for _, s := range scenarios {
		names = append(names, s.name)
	}
	return names
}

func record(t *testing.T, name string) []byte {
	t.Helper()
	if name == "script" {
		var buf bytes.Buffer
		script(ctrace.NewRecorder(&buf))
		return buf.Bytes()
	}
	for _, s := range scenarios {
		if s.name == name {
			var buf bytes.Buffer
			rec := ctrace.NewRecorder(&buf)
			walk(s.seed, s.steps, rec, s.pods...)
			if err := rec.Err(); err != nil {
				t.Fatal(err)
			}
			return buf.Bytes()
		}
	}
	t.Fatalf("no scenario %s", name)
	return nil
}

func TestTraces(t *testing.T) {
	for _, name := range traceNames() {
		t.Run(name, func(t *testing.T) {
			got := record(t, name)
			lines, err := ctrace.Read(bytes.NewReader(got))
			if err != nil {
				t.Fatal(err)
			}
			if err := ctrace.Check(lines); err != nil {
				t.Fatalf("Check rejects a history of the model: %v", err)
			}
			path := filepath.Join("testdata", name+".ndjson")
			if *update {
				if err := os.WriteFile(path, got, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("%s: %d lines", path, len(lines))
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s differs from the recorded history (%d lines now, %d committed); rerun with -update after a change of the table", path, len(lines), bytes.Count(want, []byte("\n")))
			}
		})
	}
}

// TestTracesCoverTheTable: the committed traces fire every row of the
// table (ExitedSuccessRestart needs a container that exits 0 and restarts:
// the sidecar logger).
func TestTracesCoverTheTable(t *testing.T) {
	fired := map[string]bool{}
	for _, s := range scenarios {
		lines := readTrace(t, filepath.Join("testdata", s.name+".ndjson"))
		for _, l := range lines {
			fired[l.Row] = true
		}
	}
	var missing []string
	for _, row := range speccontainer.Table {
		if !fired[row.ID] {
			missing = append(missing, row.ID)
		}
	}
	if len(missing) > 0 {
		t.Errorf("no committed trace fires the row(s) %s", strings.Join(missing, ", "))
	}
}

func readTrace(t *testing.T, path string) []ctrace.Line {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	lines, err := ctrace.Read(f)
	if err != nil {
		t.Fatal(err)
	}
	return lines
}

package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSpecName(t *testing.T) {
	tests := []struct {
		name, junit, want string
	}{
		{"labels appended", "[It] [sig-node] Pods should get a host IP [NodeConformance] [Conformance] [sig-node, NodeConformance, Conformance]",
			"[sig-node] Pods should get a host IP [NodeConformance] [Conformance]"},
		{"one label, also a tag", "[It] [sig-storage] EmptyDir works [sig-storage]", "[sig-storage] EmptyDir works"},
		{"last tag is not a label list", "[It] Pods should work [NodeConformance]", "Pods should work [NodeConformance]"},
		{"no tags", "[It] plain text", "plain text"},
		{"suite node", "[SynchronizedBeforeSuite]", "[SynchronizedBeforeSuite]"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := specName(tt.junit); got != tt.want {
				t.Errorf("specName(%q) = %q, want %q", tt.junit, got, tt.want)
			}
		})
	}
}

func TestCause(t *testing.T) {
	tests := []struct {
		name, a, b string // two reasons of one cause
	}{
		{"pod names with UIDs",
			"failed to get logs of pod pod-logs-websocket-5f6c2a1e-7b0d-4c8e-9a51-0f2d3c4b5a69: the server could not find the requested resource",
			"failed to get logs of pod busybox-scheduling-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5: the server could not find the requested resource"},
		{"namespaces and durations",
			`Timed out after 300.001s. pod "pod-1" in namespace "pods-3412" not running`,
			`Timed out after 299.5s. pod "pod-2" in namespace "pods-9921" not running`},
		{"addresses",
			`Get "https://10.0.2.15:43123/containerLogs/x": dial tcp 10.0.2.15:43123: connect: connection refused`,
			`Get "https://192.168.1.9:10250/containerLogs/x": dial tcp 192.168.1.9:10250: connect: connection refused`},
		{"random suffixes", `pod "client-envvars-abcde" failed`, `pod "client-envvars-x7k2p" failed`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if ca, cb := cause(tt.a), cause(tt.b); ca != cb {
				t.Errorf("different causes:\n  %q\n  %q", ca, cb)
			}
		})
	}
	if a, b := cause("volume type projected is not supported"), cause("security context ignored"); a == b {
		t.Errorf("two different reasons made one cause %q", a)
	}
}

func TestSummarize(t *testing.T) {
	cases := mustRead(t, "run.xml")
	selected, err := selectedSpecs(filepath.Join("testdata", "dryrun.xml"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		selected map[string]bool
		want     map[outcome]int
		wantOK   bool
	}{
		// Without the dry run a spec skipped without reason is taken as
		// filtered out; the pending one is skipped without reason too.
		{"no selection", nil, map[outcome]int{passed: 1, failed: 4, skipped: 1, notRun: 0}, false},
		// With it, the selected healthz spec did not run, and the
		// termination message spec is missing from the report altogether.
		{"dry-run selection", selected, map[outcome]int{passed: 1, failed: 4, skipped: 1, notRun: 2}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := summarize(cases, tt.selected)
			for o, n := range tt.want {
				if got := s.count(o); got != n {
					t.Errorf("%s: %d, want %d", o, got, n)
				}
			}
			if len(s.SuiteFailed) != 1 || !strings.HasPrefix(s.SuiteFailed[0].Name, "[ReportAfterSuite]") {
				t.Errorf("failed suite nodes: %+v, want the [ReportAfterSuite]", s.SuiteFailed)
			}
			if s.ok() != tt.wantOK {
				t.Errorf("ok() = %v, want %v", s.ok(), tt.wantOK)
			}
		})
	}
}

func TestReasons(t *testing.T) {
	s := summarize(mustRead(t, "run.xml"), nil)
	want := map[string]string{
		// From the message attribute.
		"[sig-node] Pods should support retrieving logs from the container over websockets [NodeConformance] [Conformance]": "failed to get logs of pod pod-logs-websocket-5f6c2a1e-7b0d-4c8e-9a51-0f2d3c4b5a69: the server could not find the requested resource (get pods pod-logs-websocket-5f6c2a1e-7b0d-4c8e-9a51-0f2d3c4b5a69)",
		// From the text, without [FAILED], when the attribute is empty.
		"[sig-node] Kubelet when scheduling a busybox command in a pod should print the output to logs [NodeConformance] [Conformance]":                            "failed to get logs of pod busybox-scheduling-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5: the server could not find the requested resource (get pods busybox-scheduling-0c1d2e3f-4a5b-6c7d-8e9f-a0b1c2d3e4f5)",
		"[sig-node] Security Context When creating a container with runAsUser should run the container with uid 65534 [LinuxOnly] [NodeConformance] [Conformance]": "A suite timeout occurred",
		// A panic is an <error>.
		"[sig-node] Pods should be updated [NodeConformance] [Conformance]": "runtime error: invalid memory address or nil pointer dereference",
		// A skip's reason without "skipped - ".
		"[sig-storage] HostPath should support r/w [NodeConformance]": "Only supported for providers [gce gke] (not local)",
	}
	got := map[string]string{}
	for _, r := range s.Specs {
		if r.Reason != "" {
			got[r.Name] = r.Reason
		}
	}
	for name, reason := range want {
		if got[name] != reason {
			t.Errorf("reason of %q:\n  got  %q\n  want %q", name, got[name], reason)
		}
	}
	if len(got) != len(want) {
		t.Errorf("%d specs with a reason, want %d: %v", len(got), len(want), got)
	}
}

func TestFailureReason(t *testing.T) {
	tests := []struct {
		name string
		m    junitMessage
		want string
	}{
		{"attribute", junitMessage{Message: "boom\nmore", Text: "[FAILED] other"}, "boom"},
		{"text", junitMessage{Text: "[FAILED] boom\nIn [It] at: x.go:1"}, "boom"},
		{"gomega timeout: what timed out too",
			junitMessage{Message: "Timed out after 300.000s.\nexpected pod to be running and ready, got instead:\n    <*v1.Pod>"},
			"Timed out after 300.000s. expected pod to be running and ready, got instead:"},
		{"gomega timeout in the text",
			junitMessage{Text: "[FAILED] Timed out after 60.001s.\n\n  expected 1, got 2\nIn [It] at: x.go:1"},
			"Timed out after 60.001s. expected 1, got 2"},
		{"gomega timeout on an error",
			junitMessage{Message: "Timed out after 120.362s.\nExpected\n    <*errors.errorString | 0x786228747f0>: \n    failed to get output for container \"c\" of pod \"p\"\n    {"},
			`Timed out after 120.362s. failed to get output for container "c" of pod "p"`},
		{"timeout with its reason on the line", junitMessage{Message: "Timed out after 5s. pod not ready\nmore"}, "Timed out after 5s. pod not ready"},
		{"nothing", junitMessage{}, "failed"},
		{"long line cut", junitMessage{Message: strings.Repeat("é", 600)}, strings.Repeat("é", 500) + "…"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := failureReason("failed", tt.m); got != tt.want {
				t.Errorf("failureReason = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestNodeEvent(t *testing.T) {
	tests := []struct{ name, timeline, want string }{
		{"podlife's failure", "STEP: x\n  I1126 dump.go:53] At 2026 - event for p-1: {podlife vm} Failed: Error: refused\n", "Failed: Error: refused"},
		{"the kubelet's, first of several", "I1 dump.go:53] At t - event for p: {kubelet vm} FailedMount: no volume\nI2 dump.go:53] At t - event for p: {kubelet vm} BackOff: later", "FailedMount: no volume"},
		{"a probe failure before the failure", "I1 dump.go:53] At t - event for s: {podlife vm} Unhealthy: Startup probe failed\nI2 dump.go:53] At t - event for p: {podlife vm} Failed: Error: refused", "Failed: Error: refused"},
		{"only a probe failure", "I1 dump.go:53] At t - event for s: {podlife vm} Unhealthy: Liveness probe failed\nI2 dump.go:53] At t - event for s: {podlife vm} BackOff: restarting", "Unhealthy: Liveness probe failed"},
		{"normal events only", "I1 dump.go:53] At t - event for p: {podlife vm} Started: Started container c", ""},
		{"someone else's failure", "I1 dump.go:53] At t - event for p: {default-scheduler } FailedScheduling: 0/1 nodes", ""},
		{"no timeline", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, isCause := nodeEvent(tt.timeline)
			if got != tt.want {
				t.Errorf("nodeEvent = %q, want %q", got, tt.want)
			}
			if wantCause := strings.HasPrefix(tt.want, "Failed"); isCause != wantCause {
				t.Errorf("nodeEvent is the cause: %v, want %v", isCause, wantCause)
			}
		})
	}
}

func TestWrite(t *testing.T) {
	selected, err := selectedSpecs(filepath.Join("testdata", "dryrun.xml"))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	summarize(mustRead(t, "run.xml"), selected).write(&out, "podlife")
	text := out.String()
	for _, want := range []string{
		"conformance (podlife): 8 specs: 1 passed, 4 failed, 1 skipped, 2 not run\n",
		"suite node failed: [ReportAfterSuite] Kubernetes e2e suite report: open /nonexistent/summary.json: no such file or directory\n",
		"failures by cause (3 causes):\n",
		// The two log failures are one cause, listed first.
		"   2  failed to get logs of pod <name>: the server could not find the requested resource (get pods <name>)\n",
		// A timeout behind which the node refused the pod: grouped by the refusal.
		"   1  node: Failed: Error: pod <name>/",
		"uid 65534 [LinuxOnly] [NodeConformance] [Conformance]\n          A suite timeout occurred\n          node: Failed: Error: pod security-context-test-4321/busybox-user-65534-0c1d2e3f: spec.securityContext.runAsUser: podlife does not apply",
		"\nskipped:\n        [sig-storage] HostPath should support r/w [NodeConformance]\n          Only supported for providers [gce gke] (not local)\n",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q; output:\n%s", want, text)
		}
	}
	if i, j := strings.Index(text, "   2  failed to get logs"), strings.Index(text, "   1  "); i < 0 || j < 0 || i > j {
		t.Errorf("the largest group is not first:\n%s", text)
	}
}

func TestParseErrors(t *testing.T) {
	tests := []struct{ name, doc, want string }{
		{"not XML", "hello", "not a JUnit"},
		{"no cases", `<testsuites><testsuite name="x"></testsuite></testsuites>`, "no <testcase>"},
		{"other root", `<testsuite name="x"><testcase name="a"/></testsuite>`, "not a JUnit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseJUnit(strings.NewReader(tt.doc))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestRunExitStatus(t *testing.T) {
	dir := t.TempDir()
	pass := filepath.Join(dir, "pass.xml")
	doc := `<testsuites><testsuite name="s">
<testcase name="[It] [sig-node] a [sig-node]" status="passed" time="1"></testcase>
<testcase name="[It] [sig-node] b [sig-node]" status="skipped" time="0"><skipped message="skipped - not on this provider"></skipped></testcase>
</testsuite></testsuites>`
	if err := os.WriteFile(pass, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	tsv := filepath.Join(dir, "out.tsv")
	ok, err := run(pass, "", "", tsv)
	if err != nil || !ok {
		t.Fatalf("run(all passed) = %v, %v; want true, nil", ok, err)
	}
	b, err := os.ReadFile(tsv)
	if err != nil {
		t.Fatal(err)
	}
	if want := "passed\t1.0\t[sig-node] a\t\nskipped\t0.0\t[sig-node] b\tnot on this provider\n"; string(b) != want {
		t.Errorf("tsv = %q, want %q", b, want)
	}
	ok, err = run(filepath.Join("testdata", "run.xml"), "", "", "")
	if err != nil || ok {
		t.Errorf("run(failures) = %v, %v; want false, nil", ok, err)
	}
	if _, err := run(filepath.Join(dir, "missing.xml"), "", "", ""); err == nil {
		t.Error("run(missing file) succeeded")
	}
	if _, err := run(pass, filepath.Join(dir, "missing.xml"), "", ""); err == nil || !strings.Contains(err.Error(), "-selection") {
		t.Errorf("run(missing selection) err = %v, want one naming -selection", err)
	}
}

func TestListSelected(t *testing.T) {
	var out, info bytes.Buffer
	if err := listSelected(&out, &info, filepath.Join("testdata", "dryrun.xml")); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 8 || lines[0] != "[sig-node] Container Runtime blackbox test should report termination message [NodeConformance]" {
		t.Errorf("listed %d specs, first %q; want 8, the Container Runtime one first:\n%s", len(lines), lines[0], out.String())
	}
	if info.String() != "8 specs selected\n" {
		t.Errorf("count line %q", info.String())
	}
	if err := listSelected(&out, &info, filepath.Join("testdata", "run.xml")); err != nil {
		t.Errorf("a run's report: %v", err) // its passed specs are listed too
	}
}

func mustRead(t *testing.T, name string) []junitCase {
	t.Helper()
	cases, err := readJUnit(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// Two refusals whose pod names differ in length are one cause, though
// each is cut to a line at a different place when printed.
func TestCauseOfLongEvents(t *testing.T) {
	tail := ": spec.securityContext.runAsUser, spec.securityContext.runAsNonRoot, spec.securityContext.seccompProfile: podlife does not apply these fields yet, and will not run a container with less isolation than its spec asks for"
	s := summary{Specs: []result{
		{Name: "a", Outcome: failed, Reason: "Timed out", EventIsCause: true, NodeEvent: "Failed: Error: pod pods-1095/pod-hostip-2225483d-1ba0-4e6c-bab6-e35de357894b" + tail},
		{Name: "b", Outcome: failed, Reason: "Timed out", EventIsCause: true, NodeEvent: "Failed: Error: pod pods-7927/pod-update-activedeadlineseconds-b51d4dd8-a3f2-4e42-995e-b9a3a81e70a7" + tail},
	}}
	if g := s.failureGroups(); len(g) != 1 {
		t.Errorf("%d groups, want 1: %+v", len(g), g)
	}
	var out bytes.Buffer
	s.write(&out, "")
	for _, line := range strings.Split(out.String(), "\n") {
		if len(line) > maxShown+20 {
			t.Errorf("line of %d bytes printed: %q", len(line), line)
		}
	}
}

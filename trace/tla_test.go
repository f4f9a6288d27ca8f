package trace_test

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// The TLA+ side of trace validation, checked without TLC: what
// tla/TracePodLifecycle.cfg binds and checks must follow the model, which
// gains constants and properties (PodLifecycle.tla, the generated
// PodLifecycleProperties.tla) without the trace module being touched. TLC
// itself runs in tools/tlc.sh --trace.

var tlaDir = filepath.Join("..", "tla")

// shellVars are the model's variables that the trace does not carry: the
// trace module keeps them at their Init values, so a property that reads
// them means nothing there.
var shellVars = []string{"loop", "timer", "channels"}

// traceSkips are the record-level invariants the trace config leaves out on
// purpose: TypeOK bounds grace periods to the model's 0..3.
var traceSkips = []string{"TypeOK"}

func readTLA(t *testing.T, name string) string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(tlaDir, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// modelConstants lists the names declared by the CONSTANTS block of
// PodLifecycle.tla (one per line, "Name," or "Name  \* comment").
func modelConstants(t *testing.T) []string {
	t.Helper()
	var names []string
	in := false
	sc := bufio.NewScanner(strings.NewReader(readTLA(t, "PodLifecycle.tla")))
	ident := regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z0-9_]*)\s*,?\s*(\\\*.*)?$`)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "CONSTANT"):
			in = true
		case in && strings.TrimSpace(line) == "":
			in = false
		case in:
			m := ident.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("PodLifecycle.tla: cannot read the CONSTANTS line %q", line)
			}
			names = append(names, m[1])
		}
	}
	if len(names) == 0 {
		t.Fatal("PodLifecycle.tla declares no CONSTANTS")
	}
	return names
}

// traceConfig reads TracePodLifecycle.cfg: the constant bindings and the
// invariants.
func traceConfig(t *testing.T) (bindings map[string]string, invariants []string) {
	t.Helper()
	bindings = map[string]string{}
	section := ""
	bind := regexp.MustCompile(`^\s*(\w+)\s*<-\s*(\w+)\s*$`)
	for line := range strings.Lines(readTLA(t, "TracePodLifecycle.cfg")) {
		line = strings.TrimRight(line, "\n")
		if i := strings.Index(line, `\*`); i >= 0 {
			line = line[:i]
		}
		f := strings.Fields(line)
		switch {
		case len(f) == 0:
		case line[0] != ' ' && line[0] != '\t':
			section = f[0]
			if len(f) > 1 && section == "INVARIANTS" {
				invariants = append(invariants, f[1:]...)
			}
		case section == "CONSTANTS" || section == "CONSTANT":
			m := bind.FindStringSubmatch(line)
			if m == nil {
				t.Fatalf("TracePodLifecycle.cfg: cannot read the CONSTANTS line %q", line)
			}
			bindings[m[1]] = m[2]
		case section == "INVARIANTS" || section == "INVARIANT":
			invariants = append(invariants, f...)
		}
	}
	return bindings, invariants
}

// definitions maps each top-level operator "Name == body" of a module to its
// first line's body.
func definitions(src string) map[string]string {
	defs := map[string]string{}
	re := regexp.MustCompile(`(?m)^([A-Za-z_][A-Za-z0-9_]*)(\([^)]*\))?\s*==\s*(.*)$`)
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		defs[m[1]] = m[3]
	}
	return defs
}

// generatedInvariants lists the state invariants of the generated
// PodLifecycleProperties.tla (their comment says "(invariant, ...").
func generatedInvariants(t *testing.T) map[string]string {
	t.Helper()
	src := readTLA(t, "PodLifecycleProperties.tla")
	out := map[string]string{}
	re := regexp.MustCompile(`(?m)^\\\* (\w+) \(invariant\b.*\n(\w+) == (.*)$`)
	for _, m := range re.FindAllStringSubmatch(src, -1) {
		if m[1] != m[2] {
			t.Fatalf("PodLifecycleProperties.tla: the comment of %s precedes %s", m[1], m[2])
		}
		out[m[2]] = m[3]
	}
	if len(out) == 0 {
		t.Fatal("PodLifecycleProperties.tla: no invariant found (did its format change?)")
	}
	return out
}

// readsShell lists the shell variables an invariant's body names (the
// generated invariants spell out every variable they read).
func readsShell(body string) []string {
	var vs []string
	for _, v := range shellVars {
		if regexp.MustCompile(`\b` + v + `\b`).MatchString(body) {
			vs = append(vs, v)
		}
	}
	return vs
}

// TestTraceConfigBindsEveryConstant: TLC refuses a config that leaves a
// constant of the model unbound; each binding must name an operator of the
// trace module.
func TestTraceConfigBindsEveryConstant(t *testing.T) {
	consts := modelConstants(t)
	bindings, _ := traceConfig(t)
	defs := definitions(readTLA(t, "TracePodLifecycle.tla"))
	for _, c := range consts {
		b, ok := bindings[c]
		if !ok {
			t.Errorf("TracePodLifecycle.cfg does not bind the model's constant %s", c)
			continue
		}
		if _, ok := defs[b]; !ok {
			t.Errorf("TracePodLifecycle.cfg binds %s <- %s, but TracePodLifecycle.tla does not define %s", c, b, b)
		}
	}
	for c := range bindings {
		if !slices.Contains(consts, c) {
			t.Errorf("TracePodLifecycle.cfg binds %s, which PodLifecycle.tla does not declare", c)
		}
	}
}

// TestTraceConfigChecksTheRecordInvariants: the trace config checks every
// generated invariant that reads only records and the waiting order (but
// TypeOK), and none that reads the shell variables, which a trace does not
// carry.
func TestTraceConfigChecksTheRecordInvariants(t *testing.T) {
	invs := generatedInvariants(t)
	_, checked := traceConfig(t)
	if len(checked) == 0 {
		t.Fatal("TracePodLifecycle.cfg checks no invariant")
	}
	for _, name := range checked {
		body, ok := invs[name]
		switch {
		case !ok:
			t.Errorf("TracePodLifecycle.cfg checks %s, which is not an invariant of PodLifecycleProperties.tla", name)
		case len(readsShell(body)) > 0:
			t.Errorf("TracePodLifecycle.cfg checks %s, which reads %v: the trace does not carry them", name, readsShell(body))
		case slices.Contains(traceSkips, name):
			t.Errorf("TracePodLifecycle.cfg checks %s, which real grace periods violate", name)
		}
	}
	for name, body := range invs {
		if len(readsShell(body)) == 0 && !slices.Contains(traceSkips, name) && !slices.Contains(checked, name) {
			t.Errorf("TracePodLifecycle.cfg does not check %s, an invariant of the records alone", name)
		}
	}
}

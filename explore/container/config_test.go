package container

import (
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	fc "github.com/podlife/podlife/fsm/container"
	sc "github.com/podlife/podlife/spec/container"
)

// mcConstants reads the MC* definitions of a tla/MCContainer*.tla module
// ("MCKinds == <<"Init", "Regular">>") as the constants of
// tla/ContainerLifecycle.tla they stand for (Kinds).
func mcConstants(t *testing.T, path string) map[string]string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^MC(\w+) == (.*)$`).FindAllStringSubmatch(string(src), -1) {
		out[m[1]] = strings.TrimSpace(m[2])
	}
	return out
}

// cfgProperties lists the properties a .cfg checks (INVARIANTS and
// PROPERTIES).
func cfgProperties(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	section := ""
	for _, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, `\*`):
		case line == "INVARIANTS" || line == "PROPERTIES" || line == "CONSTANTS" || strings.HasPrefix(line, "SPECIFICATION"):
			section = line
		case section == "INVARIANTS" || section == "PROPERTIES":
			out = append(out, line)
		}
	}
	slices.Sort(out)
	return out
}

// tla renders a configuration's constants as the MC module writes them.
func (c Config) tla() map[string]string {
	seq := func(n int, f func(i int) string) string {
		var parts []string
		for i := range n {
			parts = append(parts, f(i))
		}
		return "<<" + strings.Join(parts, ", ") + ">>"
	}
	boolean := func(b bool) string { return strings.ToUpper(map[bool]string{true: "true", false: "false"}[b]) }
	quote := func(s string) string { return `"` + s + `"` }
	n := len(c.Kinds)
	return map[string]string{
		"Kinds":    seq(n, func(i int) string { return quote(c.Kinds[i].String()) }),
		"Policies": seq(n, func(i int) string { return quote(c.Policies[i].String()) }),
		"Rules":    seq(n, func(i int) string { return boolean(c.Rules[i]) }),
		"PodNever": boolean(c.PodNever),
		"ExitCodes": seq(n, func(i int) string {
			var codes []string
			for _, code := range c.ExitCodes[i] {
				codes = append(codes, quote(code.String()))
			}
			return "{" + strings.Join(codes, ", ") + "}"
		}),
		"MaxSandbox":   strconv.Itoa(c.MaxSandbox),
		"SpecChanges":  boolean(c.SpecChanges),
		"Probes":       boolean(c.Probes),
		"Terminations": boolean(c.Terminations),
	}
}

// TestShippedConfigsMatchTheTLA: Shipped is exactly the
// tla/MCContainer*.tla modules: the same constants, the same properties
// as their .cfg files, and a configuration for every module.
func TestShippedConfigsMatchTheTLA(t *testing.T) {
	files, err := filepath.Glob("../../tla/MCContainer*.tla")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tla/MCContainer*.tla: %v", err)
	}
	var names []string
	for _, f := range files {
		names = append(names, strings.TrimSuffix(filepath.Base(f), ".tla"))
	}
	var shipped []string
	for _, c := range Shipped {
		shipped = append(shipped, c.Name)
	}
	slices.Sort(shipped)
	if !slices.Equal(names, shipped) {
		t.Fatalf("tla/ has %v, Shipped has %v", names, shipped)
	}
	for _, c := range Shipped {
		if err := c.Validate(); err != nil {
			t.Errorf("%s: %v", c.Name, err)
		}
		if got, want := c.tla(), mcConstants(t, "../../tla/"+c.Name+".tla"); !reflect.DeepEqual(got, want) {
			t.Errorf("%s: Shipped says\n  %v\nthe module says\n  %v", c.Name, got, want)
		}
		got := slices.Sorted(slices.Values(c.checked()))
		if want := cfgProperties(t, "../../tla/"+c.Name+".cfg"); !slices.Equal(got, want) {
			t.Errorf("%s: Shipped checks %v, the .cfg %v", c.Name, got, want)
		}
	}
}

// TestIntsFollowTheSchema: varInts and paramInts write the generated
// record and parameters in container.Vars and container.Params order, the
// order the properties' environments are indexed by.
func TestIntsFollowTheSchema(t *testing.T) {
	v := fc.Vars{Gen: 2, Started: true, Code: fc.ExitCodeKilled, Backoff: 1, Replacing: true}
	p := fc.Params{Kind: fc.ContainerKindRegular, Policy: fc.RestartPolicyOnFailure, Rule: true, Code: fc.ExitCodeOther,
		Sandbox: 1, SandboxReady: true, First: true, BeforeKind: fc.ContainerKindSidecar, BeforeState: fc.ContainerStateBackOff,
		BeforeGen: 2, MainSeen: true, LaterSidecarsStopped: true, Phase: fc.PodPhaseFailed, AnyRan: true}
	check := func(what string, x any, names []string, got []int) {
		rv := reflect.ValueOf(x)
		if rv.NumField() != len(names) {
			t.Fatalf("%s: %d fields, the schema has %d", what, rv.NumField(), len(names))
		}
		for i, name := range names {
			f := rv.Field(i)
			want := 0
			switch f.Kind() {
			case reflect.Bool:
				if f.Bool() {
					want = 1
				}
			case reflect.Int:
				want = int(f.Int())
			default:
				want = int(f.Uint())
			}
			if rv.Type().Field(i).Name != name || got[i] != want {
				t.Errorf("%s %d: field %s = %d, the schema's %s = %d", what, i, rv.Type().Field(i).Name, want, name, got[i])
			}
		}
	}
	vi, pi := make([]int, len(sc.Vars)), make([]int, len(sc.Params))
	varInts(v, vi)
	paramInts(p, pi)
	var vn, pn []string
	for _, x := range sc.Vars {
		vn = append(vn, x.Name)
	}
	for _, x := range sc.Params {
		pn = append(pn, x.Name)
	}
	check("Vars", v, vn, vi)
	check("Params", p, pn, pi)
}

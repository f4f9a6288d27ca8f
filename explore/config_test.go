package explore

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/spec"
)

// TestShippedConfigsMatchTheTLA reads the bounds of every tla/MC*.tla and
// compares them with Shipped, so the explorer and TLC check the same model.
func TestShippedConfigsMatchTheTLA(t *testing.T) {
	files, err := filepath.Glob("../tla/MC*.tla")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tla/MC*.tla: %v", err)
	}
	files = slices.DeleteFunc(files, isContainerModel)
	def := func(src, name string) string {
		m := regexp.MustCompile(`(?m)^` + name + ` == (.*)$`).FindStringSubmatch(src)
		if m == nil {
			t.Fatalf("no %s", name)
		}
		return strings.TrimSpace(m[1])
	}
	uids := func(set string) []types.UID {
		var out []types.UID
		for _, m := range regexp.MustCompile(`"([^"]*)"`).FindAllStringSubmatch(set, -1) {
			out = append(out, types.UID(m[1]))
		}
		slices.Sort(out)
		return out
	}
	ints := func(set string) []int64 {
		var out []int64
		for _, m := range regexp.MustCompile(`-?\d+`).FindAllString(set, -1) {
			n, _ := strconv.ParseInt(m, 10, 64)
			out = append(out, n)
		}
		return out
	}
	if len(files) != len(Shipped) {
		t.Errorf("%d MC modules, %d shipped explorer configs", len(files), len(Shipped))
	}
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(filepath.Base(f), ".tla")
		cfg, err := ShippedConfig(name)
		if err != nil {
			t.Error(err)
			continue
		}
		spec := ints(def(string(src), "MCSpecGrace"))
		kc := ints(def(string(src), "MCKillChannels"))
		if got := uids(def(string(src), "MCPods")); !slices.Equal(got, cfg.Pods) ||
			!slices.Equal(uids(def(string(src), "MCStaticPods")), cfg.StaticPods) ||
			!slices.Equal(ints(def(string(src), "MCGraceOverrides")), cfg.GraceOverrides) ||
			len(spec) != 1 || spec[0] != cfg.SpecGrace || len(kc) != 1 || int(kc[0]) != cfg.KillChannels ||
			def(string(src), "MCRuntimePods") != strings.ToUpper(strconv.FormatBool(cfg.RuntimePods)) ||
			def(string(src), "MCTerminalPhases") != strings.ToUpper(strconv.FormatBool(cfg.TerminalPhases)) {
			t.Errorf("%s: the TLA+ bounds differ from the explorer's %+v", name, cfg)
		}
		tlc := slices.DeleteFunc(slices.Clone(cfg.Properties), ExplorerOnly)
		if got := cfgProperties(t, strings.TrimSuffix(f, ".tla")+".cfg"); !slices.Equal(got, tlc) {
			t.Errorf("%s.cfg checks %v; the explorer checks %v besides its own", name, got, tlc)
		}
		if got := cfgOutsideCI(t, strings.TrimSuffix(f, ".tla")+".cfg"); got != cfg.OutsideCI {
			t.Errorf("%s.cfg: marked %q %v; the explorer's OutsideCI is %v", name, outsideCIMark, got, cfg.OutsideCI)
		}
	}
}

// outsideCIMark starts the line of a .cfg that CI skips (.ci/run, and
// tools/tlc.sh without --config, look for it).
const outsideCIMark = `\* OUTSIDE CI`

// cfgOutsideCI reports whether a TLC .cfg has a line starting with
// outsideCIMark.
func cfgOutsideCI(t *testing.T, path string) bool {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(outsideCIMark)).Match(src)
}

// cfgProperties lists the INVARIANTS and PROPERTIES a TLC .cfg names, in
// order.
func cfgProperties(t *testing.T, path string) []string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	listing := false
	for _, line := range strings.Split(string(src), "\n") {
		f := strings.Fields(line)
		switch {
		case len(f) == 0 || strings.HasPrefix(f[0], `\*`):
		case f[0] == "INVARIANTS" || f[0] == "PROPERTIES" || f[0] == "INVARIANT" || f[0] == "PROPERTY":
			listing = true
			out = append(out, f[1:]...)
		case strings.ToUpper(f[0]) == f[0] && len(f[0]) > 1 && !strings.ContainsAny(f[0], "<-"):
			listing = false // another section (CONSTANTS, SPECIFICATION, ...)
		case listing:
			out = append(out, f...)
		}
	}
	return out
}

// TestEveryPropertyHasItsTwin: every property a tla/*.cfg names is one of
// spec.Properties, rendered as Go (the explorer's table) and as TLA+
// (tla/PodLifecycleProperties.tla), and every property is checked by at
// least one shipped configuration.
func TestEveryPropertyHasItsTwin(t *testing.T) {
	tla, err := os.ReadFile("../tla/PodLifecycleProperties.tla")
	if err != nil {
		t.Fatal(err)
	}
	defined := map[string]bool{}
	for _, m := range regexp.MustCompile(`(?m)^(\w+) ==`).FindAllStringSubmatch(string(tla), -1) {
		defined[m[1]] = true
	}
	goTwin := map[string]bool{}
	for _, p := range properties {
		goTwin[p.name] = true
	}
	cfgs, _ := filepath.Glob("../tla/*.cfg")
	cfgs = slices.DeleteFunc(cfgs, isContainerModel)
	checked := map[string]bool{}
	for _, c := range cfgs {
		for _, name := range cfgProperties(t, c) {
			checked[name] = true
			if !goTwin[name] || !defined[name] {
				t.Errorf("%s names %s: Go twin %v, TLA+ definition %v", filepath.Base(c), name, goTwin[name], defined[name])
			}
		}
	}
	for _, p := range spec.Properties {
		if p.ExplorerOnly() { // TLA+ has no variable it reads: the explorer's alone
			if !goTwin[p.Name] || defined[p.Name] || checked[p.Name] {
				t.Errorf("explorer-only property %s: Go twin %v, TLA+ definition %v, named by a .cfg %v", p.Name, goTwin[p.Name], defined[p.Name], checked[p.Name])
			}
			if !slices.ContainsFunc(InCI(), func(c Config) bool { return c.checks(p.Name) }) {
				t.Errorf("explorer-only property %s is checked by no CI configuration", p.Name)
			}
			continue
		}
		if !goTwin[p.Name] || !defined[p.Name] {
			t.Errorf("spec property %s: Go twin %v, TLA+ definition %v (run go generate ./...)", p.Name, goTwin[p.Name], defined[p.Name])
		}
		if !checked[p.Name] {
			t.Errorf("spec property %s is checked by no tla/*.cfg", p.Name)
		}
	}
	if len(properties) != len(spec.Properties) {
		t.Errorf("%d generated Go properties, %d in spec.Properties (run go generate ./...)", len(properties), len(spec.Properties))
	}
}

// isContainerModel tells the container table's configs (MCContainer*, of
// tla/ContainerLifecycle.tla) from the pod lifecycle's: the explorer does
// not explore the container table yet (issue 29, item 3).
func isContainerModel(path string) bool {
	return strings.HasPrefix(filepath.Base(path), "MCContainer")
}

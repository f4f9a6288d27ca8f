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
)

// TestShippedConfigsMatchTheTLA reads the bounds of every tla/MC*.tla and
// compares them with Shipped, so the explorer and TLC check the same model.
func TestShippedConfigsMatchTheTLA(t *testing.T) {
	files, err := filepath.Glob("../tla/MC*.tla")
	if err != nil || len(files) == 0 {
		t.Fatalf("no tla/MC*.tla: %v", err)
	}
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
		if got := uids(def(string(src), "MCPods")); !slices.Equal(got, cfg.Pods) ||
			!slices.Equal(uids(def(string(src), "MCStaticPods")), cfg.StaticPods) ||
			!slices.Equal(ints(def(string(src), "MCGraceOverrides")), cfg.GraceOverrides) ||
			len(spec) != 1 || spec[0] != cfg.SpecGrace {
			t.Errorf("%s: the TLA+ bounds differ from the explorer's %+v", name, cfg)
		}
	}
}

package podfields

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
)

// coverage lists what is wrong with tables as a walk from root finds
// them: a field without a row, a row naming no field (stale), a descent
// into a type without a table, a table nothing reaches, a table's Path
// that is not where the walk found it, a malformed row.
func coverage(root reflect.Type, tables []*Table) []string {
	byType := map[reflect.Type]*Table{}
	for _, tb := range tables {
		byType[tb.Type] = tb
	}
	var problems []string
	// reached are the paths where the walk found each type; onPath are
	// the types being walked, so that a recursive type ends the walk.
	reached := map[reflect.Type][]string{}
	onPath := map[reflect.Type]bool{}
	var walk func(t reflect.Type, path string)
	walk = func(t reflect.Type, path string) {
		tb := byType[t]
		if tb == nil {
			problems = append(problems, fmt.Sprintf("%s (%s): a row descends into it, but it has no table", path, t))
			return
		}
		first := len(reached[t]) == 0
		reached[t] = append(reached[t], path)
		if onPath[t] {
			return
		}
		onPath[t] = true
		defer delete(onPath, t)
		fields := apiFields(t)
		for _, f := range fields {
			row, ok := tb.Row(f.name)
			if !ok {
				if first {
					problems = append(problems, fmt.Sprintf("%s.%s (%s): no row: say whether podlife honours, refuses or has no use for it", path, f.name, t))
				}
				continue
			}
			if row.Descend {
				sub := path + "." + f.name
				if k := f.typ.Kind(); k == reflect.Slice {
					sub += "[*]"
				}
				walk(elemType(f.typ), sub)
			}
		}
		if !first {
			return
		}
		for _, r := range tb.Rows {
			if !slices.ContainsFunc(fields, func(f apiField) bool { return f.name == r.Field }) {
				problems = append(problems, fmt.Sprintf("%s.%s (%s): the row names no field of the type (stale)", path, r.Field, t))
			}
			problems = append(problems, rowProblems(path, r)...)
		}
	}
	walk(root, "spec")
	for _, tb := range tables {
		if len(reached[tb.Type]) == 0 {
			problems = append(problems, fmt.Sprintf("table of %s: no row descends into it", tb.Type))
		} else if !slices.Contains(reached[tb.Type], tb.Path) {
			problems = append(problems, fmt.Sprintf("table of %s: Path %q is not where the walk finds it (%v)", tb.Type, tb.Path, reached[tb.Type]))
		}
	}
	return problems
}

// rowProblems are a row's own mistakes.
func rowProblems(path string, r Row) []string {
	var p []string
	at := path + "." + r.Field
	if r.Verdict < Honoured || r.Verdict > Meaningless {
		p = append(p, at+": no verdict")
	}
	if strings.TrimSpace(r.Why) == "" {
		p = append(p, at+": no reason")
	}
	if r.Verdict != Refused && (r.By != "" || r.Which != "" || r.Refuses != nil) {
		p = append(p, at+": By, Which and Refuses belong to refused rows")
	}
	if r.By == "" && (r.Which != "") != (r.Refuses != nil) {
		p = append(p, at+": a row refusing some values says which (Which) and how (Refuses)")
	}
	if r.By != "" && r.Refuses != nil {
		p = append(p, at+": a row refused by other code has no Refuses: that code decides")
	}
	if r.Descend && r.Verdict != Honoured {
		p = append(p, at+": only an honoured field is checked below")
	}
	return p
}

func TestEveryFieldHasARow(t *testing.T) {
	for _, p := range coverage(reflect.TypeFor[v1.PodSpec](), Tables()) {
		t.Error(p)
	}
}

// The required types are covered whole, not only the parts a row reaches.
func TestRequiredTypesHaveTables(t *testing.T) {
	for _, typ := range []reflect.Type{
		reflect.TypeFor[v1.PodSpec](), reflect.TypeFor[v1.Container](), reflect.TypeFor[v1.EphemeralContainer](),
		reflect.TypeFor[v1.PodSecurityContext](), reflect.TypeFor[v1.SecurityContext](), reflect.TypeFor[v1.Volume](),
		reflect.TypeFor[v1.Probe](), reflect.TypeFor[v1.Lifecycle](), reflect.TypeFor[v1.LifecycleHandler](),
		reflect.TypeFor[v1.EnvVarSource](), reflect.TypeFor[v1.ResourceRequirements](),
	} {
		if tableOf(typ) == nil {
			t.Errorf("%s has no table", typ)
		}
	}
}

func TestEphemeralContainersInheritContainerRows(t *testing.T) {
	tb := tableOf(reflect.TypeFor[v1.EphemeralContainer]())
	for i, r := range containerRows {
		if tb.Rows[i].Field != r.Field || tb.Rows[i].Verdict != r.Verdict || tb.Rows[i].Why != r.Why {
			t.Errorf("row %d of ephemeral containers is %q, want the container's %q", i, tb.Rows[i].Field, r.Field)
		}
	}
}

// The coverage check itself finds each kind of mistake.
func TestCoverageFindsMistakes(t *testing.T) {
	type leaf struct {
		A string `json:"a"`
	}
	type Inline struct {
		B string `json:"b"`
	}
	type root struct {
		Inline `json:",inline"`
		Leaf   []leaf `json:"leaf"`
		New    bool   `json:"new"`
	}
	rootT, leafT := reflect.TypeFor[root](), reflect.TypeFor[leaf]()
	tests := []struct {
		name   string
		tables []*Table
		want   []string
	}{
		{name: "complete", tables: []*Table{
			{Type: rootT, Path: "spec", Rows: []Row{honoured("b", "x"), honouredBelow("leaf", "x"), honoured("new", "x")}},
			{Type: leafT, Path: "spec.leaf[*]", Rows: []Row{honoured("a", "x")}},
		}},
		{name: "a new field without a row", tables: []*Table{
			{Type: rootT, Path: "spec", Rows: []Row{honoured("b", "x"), honouredBelow("leaf", "x")}},
			{Type: leafT, Path: "spec.leaf[*]", Rows: []Row{honoured("a", "x")}},
		}, want: []string{"spec.new (podfields.root): no row"}},
		{name: "a stale row", tables: []*Table{
			{Type: rootT, Path: "spec", Rows: []Row{honoured("b", "x"), honoured("leaf", "x"), honoured("new", "x"), refused("gone", "x")}},
		}, want: []string{"spec.gone (podfields.root): the row names no field"}},
		{name: "descent without a table", tables: []*Table{
			{Type: rootT, Path: "spec", Rows: []Row{honoured("b", "x"), honouredBelow("leaf", "x"), honoured("new", "x")}},
		}, want: []string{"spec.leaf[*] (podfields.leaf): a row descends into it, but it has no table"}},
		{name: "a table nothing reaches, a wrong path, a malformed row", tables: []*Table{
			{Type: rootT, Path: "spec.x", Rows: []Row{honoured("b", ""), honoured("leaf", "x"), {Field: "new", Verdict: Meaningless, Why: "x", By: "y"}}},
			{Type: leafT, Path: "spec.leaf[*]", Rows: []Row{honoured("a", "x")}},
		}, want: []string{"spec.b: no reason", "spec.new: By, Which and Refuses belong to refused rows",
			`table of podfields.root: Path "spec.x"`, "table of podfields.leaf: no row descends into it"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := coverage(rootT, tt.tables)
			if len(got) != len(tt.want) {
				t.Fatalf("problems = %q, want %d: %q", got, len(tt.want), tt.want)
			}
			for i := range got {
				if !strings.HasPrefix(got[i], tt.want[i]) {
					t.Errorf("problem %d = %q, want it to start with %q", i, got[i], tt.want[i])
				}
			}
		})
	}
}

package spec

import (
	"go/ast"
	"go/parser"
	"go/token"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestStateDocsNameSuccessors keeps the "Successors:" line of each State
// constant's comment equal to the states the table can move it to (rows
// that can fire; rows kept only for totality do not count).
func TestStateDocsNameSuccessors(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "states.go", nil, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	documented := map[string][]string{}
	re := regexp.MustCompile(`Successors: (.*)\.`)
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || vs.Doc == nil {
			return true
		}
		if m := re.FindStringSubmatch(vs.Doc.Text()); m != nil {
			documented[vs.Names[0].Name] = strings.Split(m[1], ", ")
		}
		return true
	})
	fired := Reachable(Table).Fired
	for _, s := range States() {
		var want []string
		for _, r := range Table {
			if fired[r.ID] && r.From == s && r.To != s && !slices.Contains(want, r.To.String()) {
				want = append(want, r.To.String())
			}
		}
		slices.SortFunc(want, func(a, b string) int { return int(stateIndex(a)) - int(stateIndex(b)) })
		if got := documented[s.String()]; !slices.Equal(got, want) {
			t.Errorf("%s: comment says successors %v, the table has %v", s, got, want)
		}
	}
}

func stateIndex(name string) State {
	for _, s := range States() {
		if s.String() == name {
			return s
		}
	}
	return numStates
}

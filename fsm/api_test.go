package fsm

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestNoExportedWayToSetState parses the package and lists its exported
// functions and methods: besides Fire and SyncKnownPods (which run
// generated transitions) they only read. A new exported mutator fails this
// test until it is reviewed and added here.
func TestNoExportedWayToSetState(t *testing.T) {
	names, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if ok, err := build.Default.MatchFile(".", name); strings.HasSuffix(name, "_test.go") || !ok || err != nil {
			continue // a test, or a file podlife is not built with (table_mutated.go)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	allowed := []string{
		"New", "NewChecked", "Events", "Machine.Fire", "Machine.SyncKnownPods", // the transitions
		"Machine.Get", "Machine.Synced", "Machine.CheckBookkeeping", "Machine.Clone", "Machine.Len", "Machine.Range", "Machine.SlotHolder", "Machine.Waiting", // reads
		"Machine.CopyInto", // Clone into an existing machine: only a state another machine reached by transitions
		"State.String", "Event.String", "Event.External", "Pending.String", "InFlight.String", "Effect.String", "Effect.Has",
		"NoTransitionError.Error", "GuardRejectedError.Error", "LooplabError.Error", "LooplabError.Unwrap",
		"State.HasRecord", "State.TerminationRequested", "State.TerminationStarted", "State.IsTerminated", "State.IsFinished", "State.MayHoldSlot",
		"Observers.Transition", "Observers.Rejected", // fan-out to observers: they receive, never set
	}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() {
				continue
			}
			name := fn.Name.Name
			if fn.Recv != nil {
				typ := fn.Recv.List[0].Type
				if star, ok := typ.(*ast.StarExpr); ok {
					typ = star.X
				}
				name = typ.(*ast.Ident).Name + "." + name
			}
			if !slices.Contains(allowed, name) {
				t.Errorf("exported %s is not a reviewed transition or read", name)
			}
		}
	}
	// Machine has no exported fields.
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if ok && ts.Name.Name == "Machine" {
				for _, fld := range ts.Type.(*ast.StructType).Fields.List {
					for _, id := range fld.Names {
						if id.IsExported() {
							t.Errorf("Machine exports field %s", id.Name)
						}
					}
				}
			}
			return true
		})
	}
}

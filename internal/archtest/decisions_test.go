package archtest

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
)

// Issue 29: no decision about a container is made outside the generated
// guards of the container table (fsm/container). cri/podplan makes every
// action from a container's course through the table (fromCourse), and
// cri/kuberuntime creates, starts and stops containers only in the steps
// that apply that plan. These tests parse both packages; a new way to
// change a container's course fails them until it is reviewed here.

// parsePackage parses the non-test Go files of the module's package dir
// that podlife is built with.
func parsePackage(t *testing.T, dir string) []*ast.File {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(moduleRoot(t), dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var files []*ast.File
	for _, name := range names {
		if ok, err := build.Default.MatchFile(filepath.Dir(name), filepath.Base(name)); strings.HasSuffix(name, "_test.go") || !ok || err != nil {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		t.Fatalf("no Go files in %s", dir)
	}
	return files
}

// moduleRoot is the module's directory (go list knows it).
func moduleRoot(t *testing.T) string {
	t.Helper()
	pkgs, err := listModule()
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range pkgs {
		if p.rel() == "internal/archtest" {
			return filepath.Dir(filepath.Dir(p.Dir))
		}
	}
	t.Fatal("go list does not list internal/archtest")
	return ""
}

// eachFunc calls f with every function declaration of files.
func eachFunc(files []*ast.File, f func(*ast.FuncDecl)) {
	for _, file := range files {
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Body != nil {
				f(fn)
			}
		}
	}
}

// The plan's decision values: a ContainerAction's kill reason and what it
// does after.
var decisionNames = []string{"ThenCreate", "ThenStart", "ThenRestart", "ThenBackOff", "KillSpecChanged", "KillProbeFailed"}

// TestPlanActionsComeOnlyFromTheTable: in cri/podplan only fromCourse,
// which takes the rows fsm/container fired (a []container.Transition),
// builds a ContainerAction, sets one of its fields or names a decision
// value.
func TestPlanActionsComeOnlyFromTheTable(t *testing.T) {
	files := parsePackage(t, "cri/podplan")
	actionFields := structFields(files, "ContainerAction")
	for _, shared := range structFields(files, "Actions") {
		actionFields = slices.DeleteFunc(actionFields, func(f string) bool { return f == shared })
	}
	if len(actionFields) < 5 {
		t.Fatalf("ContainerAction's own fields are %v: the test no longer reads the type", actionFields)
	}
	seen := false
	eachFunc(files, func(fn *ast.FuncDecl) {
		if fn.Name.Name == "String" {
			return // ContainerAction.String renders a decision, it makes none
		}
		if fn.Name.Name == "fromCourse" {
			seen = true
			if !takesTransitions(files, fn) {
				t.Errorf("fromCourse does not take the rows fsm/container fired ([]container.Transition, or steps embedding it)")
			}
			return
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if id, ok := n.Type.(*ast.Ident); ok && id.Name == "ContainerAction" {
					t.Errorf("%s builds a ContainerAction: only fromCourse may, from a course through the container table", fn.Name.Name)
				}
			case *ast.AssignStmt:
				for _, l := range n.Lhs {
					if sel, ok := l.(*ast.SelectorExpr); ok && slices.Contains(actionFields, sel.Sel.Name) {
						t.Errorf("%s sets a ContainerAction's %s: only fromCourse may", fn.Name.Name, sel.Sel.Name)
					}
				}
			case *ast.Ident:
				if slices.Contains(decisionNames, n.Name) {
					t.Errorf("%s names the decision %s: only fromCourse may, from the rows fired", fn.Name.Name, n.Name)
				}
			}
			return true
		})
	})
	if !seen {
		t.Fatal("cri/podplan has no fromCourse: the test no longer reads the package")
	}
}

// structFields lists the fields of the struct type name declared in files.
func structFields(files []*ast.File, name string) []string {
	var out []string
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != name {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					for _, id := range fld.Names {
						out = append(out, id.Name)
					}
				}
			}
			return false
		})
	}
	return out
}

// takesTransitions reports whether fn has a []container.Transition
// parameter.
func takesTransitions(files []*ast.File, fn *ast.FuncDecl) bool {
	for _, p := range fn.Type.Params.List {
		if at, ok := p.Type.(*ast.ArrayType); ok {
			switch elt := at.Elt.(type) {
			case *ast.SelectorExpr:
				if isTransition(elt) {
					return true
				}
			case *ast.Ident:
				if embedsTransition(files, elt.Name) {
					return true
				}
			}
		}
	}
	return false
}

// isTransition holds for the type container.Transition.
func isTransition(sel *ast.SelectorExpr) bool {
	x, ok := sel.X.(*ast.Ident)
	return ok && x.Name == "container" && sel.Sel.Name == "Transition"
}

// embedsTransition holds when the package's struct type name embeds
// container.Transition (a step of a course: the row with what fired it).
func embedsTransition(files []*ast.File, name string) bool {
	found := false
	for _, f := range files {
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Name.Name != name {
				return true
			}
			if st, ok := ts.Type.(*ast.StructType); ok {
				for _, fld := range st.Fields.List {
					if sel, ok := fld.Type.(*ast.SelectorExpr); ok && len(fld.Names) == 0 && isTransition(sel) {
						found = true
					}
				}
			}
			return false
		})
	}
	return found
}

// callGraph maps each function of files to the functions of the package
// it calls (a method is "Type.name"; a call resolves when it is of a
// package function or of a method on the caller's own receiver) and to
// the names of the methods in targets it calls on anything (the
// runtime's): a function that calls a target is always found, and a
// caller it has through other values is missed only above it.
func callGraph(files []*ast.File, targets []string) map[string][]string {
	g := map[string][]string{}
	eachFunc(files, func(fn *ast.FuncDecl) {
		name, recv, recvType := fn.Name.Name, "", ""
		if fn.Recv != nil {
			typ := fn.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			recvType = typ.(*ast.Ident).Name
			name = recvType + "." + name
			if len(fn.Recv.List[0].Names) > 0 {
				recv = fn.Recv.List[0].Names[0].Name
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			switch f := call.Fun.(type) {
			case *ast.Ident:
				g[name] = append(g[name], f.Name)
			case *ast.SelectorExpr:
				if x, ok := f.X.(*ast.Ident); ok && recv != "" && x.Name == recv {
					g[name] = append(g[name], recvType+"."+f.Sel.Name)
				} else if slices.Contains(targets, f.Sel.Name) {
					g[name] = append(g[name], f.Sel.Name)
				}
			}
			return true
		})
	})
	return g
}

// reachers lists the functions of g from which one of targets is called,
// directly or not, along paths that do not pass through a function of
// stops.
func reachers(g map[string][]string, targets, stops []string) []string {
	callers := map[string][]string{}
	for f, callees := range g {
		for _, c := range callees {
			callers[c] = append(callers[c], f)
		}
	}
	seen := map[string]bool{}
	queue := slices.Clone(targets)
	for len(queue) > 0 {
		x := queue[0]
		queue = queue[1:]
		for _, f := range callers[x] {
			if seen[f] {
				continue
			}
			seen[f] = true
			if !slices.Contains(stops, f) {
				queue = append(queue, f)
			}
		}
	}
	var out []string
	for f := range seen {
		if !slices.Contains(stops, f) {
			out = append(out, f)
		}
	}
	sort.Strings(out)
	return out
}

// TestContainersMoveOnlyThroughThePlan: cri/kuberuntime creates, starts,
// stops and removes containers (the runtime's CreateContainer,
// StartContainer, StopContainer, RemoveContainer) only in the steps that
// apply the plan (applyContainer, the sandbox step ensureSandbox), and in
// the reviewed paths below, each with its reason; it builds no plan value
// and names the plan's decisions only where it applies them.
func TestContainersMoveOnlyThroughThePlan(t *testing.T) {
	files := parsePackage(t, "cri/kuberuntime")
	g := callGraph(files, []string{"CreateContainer", "StartContainer", "StopContainer", "RemoveContainer"})
	// The plan's apply steps: what they call is what the plan decided.
	applySteps := []string{"Syncer.applyContainer", "Syncer.ensureSandbox"}
	for _, tc := range []struct {
		calls []string
		// want are the functions that reach calls other than through the
		// apply steps, reviewed.
		want []string
	}{
		// A container is created and started only by the plan: create and
		// start are the calls of applyContainer's steps.
		{calls: []string{"CreateContainer", "StartContainer"}, want: []string{"Syncer.create", "Syncer.start"}},
		// Stopped: by the plan (a replaced or unhealthy container, the
		// previous sandbox's leftovers), and, not yet through the table's
		// Stop rows, by the termination (SyncTerminatingPod, the kill path
		// with its own order, termorder.go) and a failed postStart hook (a
		// kill the table does not model). Those two are what remains of
		// issue 29 here.
		{calls: []string{"StopContainer"}, want: []string{
			"Syncer.SyncTerminatingPod", "Syncer.SyncTerminatingRuntimePod", "Syncer.stopPod", "Syncer.killContainers", // termination
			"Syncer.create", "Syncer.start", "Syncer.postStart", // a failed postStart hook
			"Syncer.killContainer",                   // the one StopContainer
			"Syncer.killUnhealthy", "Syncer.replace", // the plan's kills: applyContainer's steps
		}},
		// Removed: the garbage collector and the removal of a pod's
		// instances (the table's Purge marks a previous sandbox's instance
		// as nothing of the pod's course; removing it is the collector's).
		{calls: []string{"RemoveContainer"}, want: []string{
			"Syncer.RemoveDeadPod", "Syncer.SyncTerminatingRuntimePod", "Syncer.remove", "Syncer.removeInBackground",
		}},
	} {
		got := reachers(g, tc.calls, applySteps)
		slices.Sort(tc.want)
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v is reached, besides the plan's apply steps %v, from\n  %q\nreviewed:\n  %q", tc.calls, applySteps, got, tc.want)
		}
	}
	eachFunc(files, func(fn *ast.FuncDecl) {
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.CompositeLit:
				if sel, ok := n.Type.(*ast.SelectorExpr); ok && isPodplan(sel.X) && (sel.Sel.Name == "ContainerAction" || sel.Sel.Name == "Actions") {
					t.Errorf("%s builds a podplan.%s: only podplan's plan may", fn.Name.Name, sel.Sel.Name)
				}
			case *ast.SelectorExpr:
				if isPodplan(n.X) && slices.Contains(decisionNames, n.Sel.Name) && fn.Name.Name != "applyContainer" {
					t.Errorf("%s names the plan's decision podplan.%s: only applyContainer, which applies it, may", fn.Name.Name, n.Sel.Name)
				}
			}
			return true
		})
	})
}

func isPodplan(x ast.Expr) bool {
	id, ok := x.(*ast.Ident)
	return ok && id.Name == "podplan"
}

package archtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

const module = "github.com/podlife/podlife"

// pkg is what `go list -json` says of one package of the module.
type pkg struct {
	ImportPath   string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
}

// rel is the package's path in the module: "" for the root, "cri/volume".
func (p pkg) rel() string { return strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, module), "/") }

// allImports are the imports of the package and of its tests.
func (p pkg) allImports() []string {
	return slices.Concat(p.Imports, p.TestImports, p.XTestImports)
}

func goList(patterns ...string) ([]pkg, error) {
	args := append([]string{"list", "-json=ImportPath,Dir,GoFiles,Imports,TestImports,XTestImports,Deps"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("go %s: %v", strings.Join(args, " "), err)
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p pkg
		if err := dec.Decode(&p); err != nil {
			return nil, err
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, nil
}

// listModule lists the module's packages once for all the tests.
var listModule = sync.OnceValues(func() ([]pkg, error) { return goList(module + "/...") })

// modulePackages lists every package of the module; the test fails if
// go list finds too few to mean anything.
func modulePackages(t *testing.T) map[string]pkg {
	t.Helper()
	pkgs, err := listModule()
	if err != nil {
		t.Fatal(err)
	}
	byRel := map[string]pkg{}
	for _, p := range pkgs {
		byRel[p.rel()] = p
	}
	for _, must := range []string{"worker", "fsm", "kubetypes", "cri", "cri/kuberuntime", "cri/podcache", "agent", "agent/api", "agent/client", "agent/server", "agent/kubeletserver", "cmd/podlife"} {
		if _, ok := byRel[must]; !ok {
			t.Fatalf("go list found no package %s: the rules below name packages that no longer exist", must)
		}
	}
	return byRel
}

// inModule returns the module packages among paths, as module-relative
// paths, sorted.
func inModule(paths []string) []string {
	var out []string
	for _, p := range paths {
		if p == module || strings.HasPrefix(p, module+"/") {
			out = append(out, strings.TrimPrefix(strings.TrimPrefix(p, module), "/"))
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

func under(rel, dir string) bool { return rel == dir || strings.HasPrefix(rel, dir+"/") }

// The engine (worker and the generated machine it runs) is what every node
// agent embeds: it depends on nothing of the node side, so no package that
// imports it can ever be an import cycle away from it.
func TestEngineDependsOnNoNodePackage(t *testing.T) {
	pkgs := modulePackages(t)
	allowed := []string{"fsm", "kubetypes"}
	for _, engine := range []string{"worker", "fsm"} {
		for _, dep := range inModule(pkgs[engine].Deps) {
			if !slices.Contains(allowed, dep) {
				t.Errorf("%s depends on %s; the engine may depend only on %v", engine, dep, allowed)
			}
		}
	}
}

// workerImporters are the node-side packages that may import the engine:
// the composition root, which runs it, the syncer, which it calls, and the
// runtime status cache, which it reads. Every other node package works on
// pods and runtime objects and names pods through kubetypes.
var workerImporters = []string{"agent", "cri/kuberuntime", "cri/podcache"}

func TestOnlyTheSyncerTheCacheAndTheRootImportTheEngine(t *testing.T) {
	for _, p := range modulePackages(t) {
		rel := p.rel()
		if !under(rel, "cri") && !under(rel, "agent") || slices.Contains(workerImporters, rel) {
			continue
		}
		if slices.Contains(p.Imports, module+"/worker") {
			t.Errorf("%s imports the engine (worker); only %v may: name pods through kubetypes", rel, workerImporters)
		}
	}
}

// kuberuntime is the top of the runtime side: the syncer composes the job
// packages, never the other way round.
func TestNothingUnderCriImportsKuberuntime(t *testing.T) {
	for _, p := range modulePackages(t) {
		rel := p.rel()
		if !under(rel, "cri") || under(rel, "cri/kuberuntime") {
			continue
		}
		if slices.Contains(p.allImports(), module+"/cri/kuberuntime") {
			t.Errorf("%s imports cri/kuberuntime: job packages sit below the syncer", rel)
		}
	}
}

// jobEdges are the imports allowed among the runtime side's job packages,
// besides the cri root and kubetypes, each a lower layer the other
// genuinely builds on. Anything else a job package needs goes down into
// the cri root (shared vocabulary) or up into kuberuntime (composition).
var jobEdges = map[string][]string{
	// A container's status carries its termination message, its probes'
	// readiness and its volume mounts as the volume layer resolves them
	// (recursive read-only).
	"cri/apistatus": {"cri/podfiles", "cri/prober", "cri/volume"},
	// The probe runner carries out prober's probes with the hooks' actions.
	"cri/lifecycle": {"cri/prober"},
	// A termination message falls back to the tail of the container's log.
	"cri/podfiles": {"cri/logs"},
	// The container garbage collector removes a dead instance's log files
	// and termination message file with it.
	"cri/containergc": {"cri/logs", "cri/podfiles"},
	// A downwardAPI volume holds the downward API's values; every volume
	// is mounted through the mount layer.
	"cri/volume": {"cri/envvars", "cri/mount"},
	// The sync plan reads the facts the status is generated from (a
	// finished pod, a regular container started in the sandbox), so that
	// the two agree, and hands back why a container waits as a status
	// Waiting; prober names the kind of the probe that failed. Every
	// decision about a container is a row of the container table's
	// generated guards (fsm/container, which imports nothing of podlife).
	"cri/podplan": {"cri/apistatus", "cri/prober", "fsm/container"},
}

// A job package (every package under cri/ but the root, kuberuntime, the
// status cache and the embedded runtime) imports of podlife only the cri
// root's vocabulary, the pod identity leaf, the events' texts (cri/events:
// each reason and message written once, importing nothing of podlife) and
// its allowed lower layers.
func TestJobPackagesImportOnlyTheVocabulary(t *testing.T) {
	composers := []string{"cri", "cri/kuberuntime", "cri/podcache"}
	pkgs := modulePackages(t)
	for _, p := range pkgs {
		rel := p.rel()
		if !under(rel, "cri") || slices.Contains(composers, rel) || strings.HasPrefix(rel, "cri/embedded") {
			continue
		}
		allowed := append([]string{"cri", "kubetypes", "cri/events"}, jobEdges[rel]...)
		for _, imp := range inModule(p.Imports) {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; a job package may import only %v", rel, imp, allowed)
			}
		}
	}
	// The cri root and the events' texts are the vocabulary: they import
	// nothing of podlife.
	for _, vocabulary := range []string{"cri", "cri/events"} {
		if imps := inModule(pkgs[vocabulary].Imports); len(imps) > 0 {
			t.Errorf("%s imports %v; it must stay the shared vocabulary, below every job package", vocabulary, imps)
		}
	}
}

// maxPackageLines is where a hand-written node-side package is split
// before it gains more (DEVELOPERS.md: ~2,500 lines, or a second job).
const maxPackageLines = 2600

func TestNodePackagesStaySmall(t *testing.T) {
	for _, p := range modulePackages(t) {
		rel := p.rel()
		if !under(rel, "cri") && !under(rel, "agent") {
			continue
		}
		lines := 0
		for _, f := range p.GoFiles {
			if strings.HasPrefix(f, "zz_generated") {
				continue
			}
			lines += countLines(t, filepath.Join(p.Dir, f))
		}
		if lines > maxPackageLines {
			t.Errorf("%s has %d hand-written lines (more than %d): split it by job before adding to it", rel, lines, maxPackageLines)
		}
	}
}

func countLines(t *testing.T, path string) int {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n := 0
	for s := bufio.NewScanner(f); s.Scan(); {
		n++
	}
	return n
}

// daemonForbidden are packages the node agent's binary must not link:
// test, fake and checker code has no place on a production node.
func daemonForbidden(path string) error {
	switch {
	case path == "testing" || strings.HasPrefix(path, "testing/"):
		return fmt.Errorf("the standard testing package")
	case strings.HasPrefix(path, "github.com/stretchr/testify"):
		return fmt.Errorf("testify")
	case path == "k8s.io/client-go/testing":
		// client-go's typed clients (k8s.io/client-go/gentype) import
		// its fake-object tracker; nothing of it is reachable from the
		// agent, so the linker drops it (TestDaemonBinarySymbols checks).
		return nil
	case strings.HasSuffix(path, "/testing") || strings.Contains(path, "/testing/") || strings.HasSuffix(path, "/fake"):
		return fmt.Errorf("a test or fake package")
	case slices.ContainsFunc([]string{"/explore", "/trace", "/spec", "/gen"}, func(dir string) bool {
		return path == module+dir || strings.HasPrefix(path, module+dir+"/")
	}):
		return fmt.Errorf("a checker or the table (developer code: cmd/podlife-dev)")
	case strings.HasPrefix(path, module+"/") && testSupport(path):
		return fmt.Errorf("test support")
	}
	return nil
}

// testSupport reports whether a module package is there for tests: its
// name says test, fake or mutants (internal/testlog, internal/critest,
// internal/crifake, internal/mutants...).
func testSupport(path string) bool {
	name := path[strings.LastIndex(path, "/")+1:]
	return strings.Contains(name, "test") || strings.Contains(name, "fake") || strings.Contains(name, "mutants")
}

func TestDaemonLinksNoTestCode(t *testing.T) {
	daemon := modulePackages(t)["cmd/podlife"]
	for _, dep := range daemon.Deps {
		if err := daemonForbidden(dep); err != nil {
			t.Errorf("cmd/podlife (the node agent) depends on %s: %v", dep, err)
		}
	}
}

// The binary itself, as `go tool nm` shows it: what the dependency list
// allows must also be what the linker kept.
func TestDaemonBinarySymbols(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIPPED in -short: builds the node agent")
	}
	bin := filepath.Join(t.TempDir(), "podlife")
	if out, err := exec.Command("go", "build", "-o", bin, module+"/cmd/podlife").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	out, err := exec.Command("go", "tool", "nm", bin).Output()
	if err != nil {
		t.Fatalf("go tool nm: %v", err)
	}
	forbidden := []string{" testing.", "testify", module + "/explore.", module + "/explore/", module + "/trace.", module + "/spec.", "cri-api/pkg/apis/testing", "cri-client/pkg/fake"}
	found := map[string]int{}
	for line := range strings.Lines(string(out)) {
		for _, f := range forbidden {
			if strings.Contains(line, f) {
				found[f]++
			}
		}
	}
	for _, f := range forbidden {
		if found[f] > 0 {
			t.Errorf("the node agent's binary has %d symbols matching %q", found[f], f)
		}
	}
	if fi, err := os.Stat(bin); err == nil {
		t.Logf("the node agent's binary: %d bytes", fi.Size())
	}
}

// The agent's servers serve a host interface, and its wire types and
// client are all the CLI links: none of them reaches into the agent root,
// the engine or the syncer.
func TestAgentServersAndWireTypesStandApart(t *testing.T) {
	pkgs := modulePackages(t)
	mayImport := map[string][]string{
		"agent/api":    nil,
		"agent/client": {"agent/api"},
	}
	for rel, allowed := range mayImport {
		for _, imp := range inModule(pkgs[rel].Imports) {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; it may import only %v of podlife", rel, imp, allowed)
			}
		}
	}
	// The kubelet API is a server of the same kind: it serves its Host
	// (and reuses agent/server's container log handler).
	for _, srv := range []string{"agent/server", "agent/kubeletserver"} {
		for _, imp := range inModule(pkgs[srv].Imports) {
			if imp == "agent" || imp == "worker" || imp == "cri/kuberuntime" {
				t.Errorf("%s imports %s; it serves its host interface and reaches nothing behind it", srv, imp)
			}
		}
	}
}

// The pod sources (the manifest directory, the API server) report
// kubetypes.Change and know nothing of each other or of the agent that
// consumes them (kubelet: pkg/kubelet/config's sources).
func TestPodSourcesStandApart(t *testing.T) {
	pkgs := modulePackages(t)
	sources := []string{"agent/manifests", "agent/apisource"}
	for _, src := range sources {
		for _, imp := range inModule(pkgs[src].Imports) {
			if slices.Contains(sources, imp) || imp == "agent" {
				t.Errorf("%s imports %s; a pod source reports kubetypes.Change and imports no other source nor the agent", src, imp)
			}
		}
	}
}

// explorerEdges are the imports of podlife each package of the explorers
// may have, each a job of its own: TLC's notation (tlavalue, tlcstate)
// and the search for fair cycles (fair) are leaves both explorers share;
// the pod explorer drives the engine's core; the container explorer reads
// only the generated container guards and the container table's
// properties, never the pod engine.
var explorerEdges = map[string][]string{
	"explore/tlavalue":  nil,
	"explore/tlcstate":  {"explore/tlavalue"},
	"explore/fair":      nil,
	"explore":           {"explore/fair", "explore/tlavalue", "explore/tlcstate", "fsm", "kubetypes", "spec", "trace", "worker"},
	"explore/container": {"explore/fair", "explore/tlavalue", "explore/tlcstate", "fsm/container", "spec", "spec/container"},
}

// TestExplorerPackagesByJob: every package under explore/ has its edges
// listed above, imports no more, and stays under maxPackageLines
// hand-written lines (the explorer was split by job at 2,849).
func TestExplorerPackagesByJob(t *testing.T) {
	for _, p := range modulePackages(t) {
		rel := p.rel()
		if !under(rel, "explore") {
			continue
		}
		allowed, ok := explorerEdges[rel]
		if !ok {
			t.Errorf("%s is not in explorerEdges: give it its edges and their reason", rel)
			continue
		}
		for _, imp := range inModule(p.Imports) {
			if !slices.Contains(allowed, imp) {
				t.Errorf("%s imports %s; it may import only %v of podlife", rel, imp, allowed)
			}
		}
		lines := 0
		for _, f := range p.GoFiles {
			if !strings.HasPrefix(f, "zz_generated") {
				lines += countLines(t, filepath.Join(p.Dir, f))
			}
		}
		if lines > maxPackageLines {
			t.Errorf("%s has %d hand-written lines (more than %d): split it by job before adding to it", rel, lines, maxPackageLines)
		}
	}
}

// The device manager (agent/devicemanager) is a leaf that the agent root
// wires in: the Node asks it through node.Config.DeviceResources, the
// admission chain through an admission.Handler the root makes, the syncer
// through kuberuntime.Devices. It imports nothing of podlife, and nothing
// but the root (and the tests) imports it, so neither the Node, the
// admission chain nor the syncer depend on the device plugins' gRPC.
func TestDeviceManagerIsALeaf(t *testing.T) {
	const dm = "agent/devicemanager"
	pkgs := modulePackages(t)
	if _, ok := pkgs[dm]; !ok {
		t.Fatalf("go list found no package %s", dm)
	}
	if imps := inModule(pkgs[dm].Imports); len(imps) > 0 {
		t.Errorf("%s imports %v; it must import nothing of podlife", dm, imps)
	}
	for rel, p := range pkgs {
		if rel != "agent" && slices.Contains(inModule(p.Imports), dm) {
			t.Errorf("%s imports %s; only the agent root wires the device manager", rel, dm)
		}
	}
}

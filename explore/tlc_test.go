package explore

import (
	"bytes"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/types"

	"github.com/podlife/podlife/explore/tlcstate"
)

// The tests of this file read TLC's own output: committed fixtures
// (testdata/tlc-*, see testdata/README.md) always, and, when TLA2TOOLS_JAR
// points to tla2tools.jar, TLC itself, run on copies of ../tla.

var tlcUpdate = flag.Bool("tlc.update", false, "rewrite testdata/tlc-* from TLC runs (needs TLA2TOOLS_JAR)")

// fixtureConfig is the bounds of the fixtures: one static pod and one
// ordinary pod, as MCPodLifecycleMixed.
var fixtureConfig = Config{Name: "tlcfixture", Pods: []types.UID{"p1", "p2"}, StaticPods: []types.UID{"p1"}, GraceOverrides: []int64{1}, SpecGrace: 2, KillChannels: 1, RuntimePods: true, TerminalPhases: true}

// fixtureModule is the TLA+ module of fixtureConfig. MCLevel keeps the
// states within one step of the initial state (TLC's level 1 and 2);
// the Must* invariants are meant to fail.
const fixtureModule = `---- MODULE MCFixture ----
EXTENDS PodLifecycleProperties
MCPods == {"p1", "p2"}
MCStaticPods == {"p1"}
MCGraceOverrides == {1}
MCSpecGrace == 2
MCKillChannels == 1
MCRuntimePods == TRUE
MCTerminalPhases == TRUE
OnePod == {"p1"}
MCLevel == TLCGet("level") <= 2
\* Must fail: a pod that is killed terminates.
MustNotTerminate == \A p \in Pods : rec[p].state # "Terminating"
\* Must fail: the static pod may wait while the other terminates.
MustNotWaitWhileTerminating == ~(waiting # <<>> /\ \E p \in Pods : rec[p].state = "Terminating")
====
`

// fixtureCfg returns a cfg of MCFixture with extra lines.
func fixtureCfg(extra ...string) string {
	return `CONSTANTS
    Pods <- MCPods
    StaticPods <- MCStaticPods
    GraceOverrides <- MCGraceOverrides
    SpecGrace <- MCSpecGrace
    KillChannels <- MCKillChannels
    RuntimePods <- MCRuntimePods
    TerminalPhases <- MCTerminalPhases
SPECIFICATION Spec
` + strings.Join(extra, "\n") + "\n"
}

// tlcJar returns $TLA2TOOLS_JAR, or skips the test.
func tlcJar(t *testing.T) string {
	t.Helper()
	jar := os.Getenv("TLA2TOOLS_JAR")
	if jar == "" {
		t.Skip("TLA2TOOLS_JAR is not set: skipping the test that runs TLC (export TLA2TOOLS_JAR=/path/to/tla2tools.jar)")
	}
	if _, err := os.Stat(jar); err != nil {
		t.Fatalf("TLA2TOOLS_JAR: %v", err)
	}
	if _, err := exec.LookPath("java"); err != nil {
		t.Fatalf("TLA2TOOLS_JAR is set but java is missing: %v", err)
	}
	return jar
}

// runTLC copies ../tla/*.tla and the fixture module with cfg into a
// temporary directory, runs TLC there with one worker and returns what it
// printed and its exit status.
func runTLC(t *testing.T, jar, cfg string, args ...string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	mods, err := filepath.Glob(filepath.Join("..", "tla", "*.tla"))
	if err != nil || len(mods) == 0 {
		t.Fatalf("no ../tla/*.tla: %v", err)
	}
	for _, m := range mods {
		data, err := os.ReadFile(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, filepath.Base(m)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range map[string]string{"MCFixture.tla": fixtureModule, "MCFixture.cfg": cfg} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args = append(append([]string{"-XX:+UseParallelGC", "-cp", jar, "tlc2.TLC", "-workers", "1"}, args...), "-config", "MCFixture.cfg", "MCFixture.tla")
	cmd := exec.Command("java", args...)
	cmd.Dir = dir
	start := time.Now()
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("java: %v", err)
		}
		code = ee.ExitCode()
	}
	t.Logf("TLC %v: exit %d in %v", args[4:], code, time.Since(start).Round(time.Millisecond))
	return string(out), code
}

// tlcStats are the numbers of TLC's closing lines.
var tlcStats = regexp.MustCompile(`(?m)^([0-9,]+) states generated, ([0-9,]+) distinct states found`)

// engineStates returns the spec states the engine's core passes through
// on inputs, the initial state first.
func engineStates(t *testing.T, cfg Config, inputs []Input) []tlcstate.State {
	t.Helper()
	w := newWorld(cfg)
	var states []tlcstate.State
	if err := replay(cfg, inputs, func(s *snapshot) { states = append(states, w.spec(s)) }); err != nil {
		t.Fatalf("replaying %v: %v", inputs, err)
	}
	return states
}

// oneStep returns the engine's initial state and every state one input
// away from it.
func oneStep(cfg Config) []tlcstate.State {
	w := newWorld(cfg)
	sm := w.newSim(nil)
	init := w.project(sm)
	states := []tlcstate.State{w.spec(&init)}
	for _, in := range cfg.Inputs() {
		try := sm.clone()
		if offered, err := w.apply(try, in); !offered || err != nil {
			continue
		}
		next := w.project(try)
		states = append(states, w.spec(&next))
	}
	return states
}

func readStatesFile(t *testing.T, path string) []tlcstate.State {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	states, err := tlcstate.Read(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return states
}

// TestTLCFixtures reads real TLC output: a -dump of the states within one
// step of the initial state (22 states, in TLC's record notation), which
// must be exactly the engine's, and an error trace, which FromTLC must turn
// into engine inputs that reach TLC's last state. With -tlc.update it first
// rewrites both files from TLC.
func TestTLCFixtures(t *testing.T) {
	dumpPath := filepath.Join("testdata", "tlc-level2.dump")
	tracePath := filepath.Join("testdata", "tlc-trace.txt")
	if *tlcUpdate {
		jar := tlcJar(t)
		tmp := t.TempDir()
		out, code := runTLC(t, jar, fixtureCfg("INVARIANTS TypeOK", "CONSTRAINT MCLevel"), "-dump", filepath.Join(tmp, "level2.dump"))
		if code != 0 {
			t.Fatalf("TLC -dump: exit %d\n%s", code, out)
		}
		data, err := os.ReadFile(filepath.Join(tmp, "level2.dump"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dumpPath, data, 0o644); err != nil {
			t.Fatal(err)
		}
		out, code = runTLC(t, jar, fixtureCfg("INVARIANTS TypeOK MustNotWaitWhileTerminating"))
		if code == 0 || !strings.Contains(out, "Error: Invariant MustNotWaitWhileTerminating is violated.") {
			t.Fatalf("TLC found no violation: exit %d\n%s", code, out)
		}
		if err := os.WriteFile(tracePath, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	// The dump: TLC prints rec as a record [p1 |-> ..., p2 |-> ...].
	raw, err := os.ReadFile(dumpPath)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(raw), "/\\ rec = [ p1 |->") {
		t.Fatalf("%s is not in TLC's record notation", dumpPath)
	}
	tlc := readStatesFile(t, dumpPath)
	onlyTLC, onlyEngine, nt, ne := tlcstate.Diff(tlc, oneStep(fixtureConfig), 3)
	if nt != 22 || len(onlyTLC)+len(onlyEngine) != 0 {
		t.Fatalf("TLC's %d states and the engine's %d differ:\nonly in TLC: %v\nonly in the engine: %v", nt, ne, onlyTLC, onlyEngine)
	}
	// What WriteDump writes reads back as the same states, in TLC's notation.
	var buf bytes.Buffer
	if err := tlcstate.WriteDump(&buf, tlc); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(buf.String(), ":>") {
		t.Fatalf("WriteDump wrote a function where TLC writes a record:\n%s", buf.String()[:500])
	}
	again, err := tlcstate.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if x, y, _, _ := tlcstate.Diff(tlc, again, 1); len(x)+len(y) != 0 {
		t.Fatalf("WriteDump does not read back: %v %v", x, y)
	}

	// The error trace.
	states := readStatesFile(t, tracePath)
	if len(states) < 3 {
		t.Fatalf("%s: %d states", tracePath, len(states))
	}
	checkFromTLC(t, fixtureConfig, states)
	if last := states[len(states)-1]; last["waiting"].Canonical() != `<<"p1">>` {
		t.Errorf("TLC's last state has waiting = %s, want <<\"p1\">>", last["waiting"].Canonical())
	}
}

// checkFromTLC converts TLC's behaviour to engine inputs, replays them on
// the engine's core with every invariant and step property, and checks
// that the core passes through TLC's states, the last one included.
func checkFromTLC(t *testing.T, cfg Config, states []tlcstate.State) []Input {
	t.Helper()
	inputs, err := FromTLC(cfg, states)
	if err != nil {
		t.Fatalf("FromTLC: %v", err)
	}
	if len(inputs) != len(states)-1 {
		t.Fatalf("FromTLC: %d inputs for %d states", len(inputs), len(states))
	}
	if err := Replay(cfg, inputs); err != nil {
		t.Fatalf("Replay: %v", err)
	}
	got := engineStates(t, cfg, inputs)
	for i := range states {
		if !got[i].Equal(states[i]) {
			t.Fatalf("after %d inputs %v the engine is in\n  %s\nTLC says\n  %s", i, inputs[:i], got[i].Canonical(), states[i].Canonical())
		}
	}
	return inputs
}

// TestTLCCounterexample runs TLC on an invariant that must fail (no pod is
// ever Terminating) and replays TLC's error trace on the engine's core.
func TestTLCCounterexample(t *testing.T) {
	jar := tlcJar(t)
	out, code := runTLC(t, jar, fixtureCfg("INVARIANTS TypeOK MustNotTerminate"))
	if code != 12 || !strings.Contains(out, "Error: Invariant MustNotTerminate is violated.") {
		t.Fatalf("TLC did not report the violation of MustNotTerminate (exit %d, want 12):\n%s", code, out)
	}
	states, err := tlcstate.Read(strings.NewReader(out))
	if err != nil {
		t.Fatalf("reading TLC's error trace: %v", err)
	}
	if len(states) < 2 {
		t.Fatalf("TLC's error trace has %d states:\n%s", len(states), out)
	}
	inputs := checkFromTLC(t, fixtureConfig, states)
	last := engineStates(t, fixtureConfig, inputs)[len(inputs)]
	if !strings.Contains(last["rec"].Canonical(), `state |-> "Terminating"`) {
		t.Fatalf("the engine's last state has no Terminating pod: %s", last.Canonical())
	}
	t.Logf("TLC's counterexample, %d steps, replayed on the engine: %v", len(inputs), inputs)
}

// TestTLCDumpMatchesExplorer compares TLC's whole state space of one
// static pod with the explorer's, state for state.
func TestTLCDumpMatchesExplorer(t *testing.T) {
	jar := tlcJar(t)
	dump := filepath.Join(t.TempDir(), "tlc.dump")
	cfg := strings.Replace(fixtureCfg("INVARIANTS TypeOK Inv38 Inv40"), "Pods <- MCPods\n    StaticPods <- MCStaticPods", "Pods <- OnePod\n    StaticPods <- OnePod", 1)
	out, code := runTLC(t, jar, cfg, "-dump", dump)
	m := tlcStats.FindStringSubmatch(out)
	if code != 0 || !strings.Contains(out, "Model checking completed. No error has been found.") || m == nil {
		t.Fatalf("TLC: exit %d\n%s", code, out)
	}
	tlc := readStatesFile(t, dump)
	res, err := Explore(Config{Name: "onepod", Pods: []types.UID{"p1"}, StaticPods: []types.UID{"p1"}, GraceOverrides: []int64{1}, SpecGrace: 2, KillChannels: 1, RuntimePods: true, TerminalPhases: true}, Options{SkipLiveness: true})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := res.Dump(&buf); err != nil {
		t.Fatal(err)
	}
	explorer, err := tlcstate.Read(&buf)
	if err != nil {
		t.Fatal(err)
	}
	onlyTLC, onlyExplorer, nt, ne := tlcstate.Diff(tlc, explorer, 3)
	if strings.ReplaceAll(m[2], ",", "") != strconv.Itoa(nt) || nt != res.States || len(onlyTLC)+len(onlyExplorer) != 0 {
		t.Fatalf("TLC found %s distinct states (%d in its dump), the explorer %d (%d in its dump)\nonly in TLC: %v\nonly in the explorer: %v",
			m[2], nt, res.States, ne, onlyTLC, onlyExplorer)
	}
	t.Logf("TLC and the explorer: the same %d states", nt)
}

// Package demo is `podlife-dev demo`: a scripted scenario that drives the node
// agent end to end on its embedded runtime, prints what happens, and
// validates the engine's trace against the lifecycle table.
package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/types"
	internalapi "k8s.io/cri-api/pkg/apis"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	remote "k8s.io/cri-client/pkg"
	"k8s.io/klog/v2"

	"github.com/podlife/podlife/agent"
	"github.com/podlife/podlife/agent/api"
	"github.com/podlife/podlife/agent/config"
	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/fsm"
	"github.com/podlife/podlife/internal/podtable"
	"github.com/podlife/podlife/trace"
)

// Options configure a demo run.
type Options struct {
	// Dir holds the manifests, the runtime socket and the trace; "" is a
	// new temporary directory, removed afterwards.
	Dir string
	// Logs, when set, receives the agent's structured logs.
	Logs io.Writer
	// StepTimeout bounds the wait for each step's outcome; 0 is 30 s.
	StepTimeout time.Duration
}

// demo is one run of the script.
type demo struct {
	out      *lockedWriter
	agent    *agent.Agent
	runtime  internalapi.RuntimeService
	manifest string
	start    time.Time
	timeout  time.Duration
	step     int
}

// Run plays the scenario and reports the first step whose outcome did not
// come, or a trace that does not follow the table.
func Run(ctx context.Context, w io.Writer, opts Options) (err error) {
	dir := opts.Dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "podlife-demo-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	d := &demo{out: &lockedWriter{w: w}, manifest: filepath.Join(dir, "manifests"), start: time.Now(), timeout: opts.StepTimeout}
	if d.timeout == 0 {
		d.timeout = 30 * time.Second
	}
	if err := os.MkdirAll(d.manifest, 0o755); err != nil {
		return err
	}
	tracePath := filepath.Join(dir, "trace.ndjson")
	traceFile, err := os.Create(tracePath)
	if err != nil {
		return err
	}
	defer traceFile.Close()
	tw := trace.NewWriter(traceFile)

	cfg := config.Default()
	cfg.NodeName = "demo"
	cfg.StaticPodPath = d.manifest
	cfg.RootDir = dir
	cfg.Port = 0 // no kubelet API: the demo has no cluster
	// No healthz port: a real node on this machine may hold the kubelet's 10248.
	cfg.HealthzPort = 0
	cfg.FileCheckFrequency.Duration = 100 * time.Millisecond
	cfg.HousekeepingInterval.Duration = 300 * time.Millisecond
	cfg.RuntimePollInterval.Duration = 100 * time.Millisecond
	cfg.Allocatable = mustResources("cpu=2,memory=4Gi")
	cfg.ShutdownGracePeriod.Duration = 4 * time.Second
	cfg.ShutdownGracePeriodCriticalPods.Duration = 2 * time.Second
	logs := slog.New(slog.DiscardHandler)
	if opts.Logs != nil {
		logs = slog.New(slog.NewTextHandler(opts.Logs, nil))
	}
	// The CRI client logs its failed calls (the injected ones too) through
	// klog: they belong with the agent's logs, not in the demo's output.
	klog.SetSlogLogger(logs)
	a, err := agent.New(ctx, cfg, agent.Options{
		Logger:      logs,
		Observer:    fsm.Observers{tw, &progress{d: d}},
		SyncBackOff: 500 * time.Millisecond, ReadOnlyAnyPort: true,
		NoLogind: true, // the demo's node shutdown is its own, not the machine's
	})
	if err != nil {
		return err
	}
	d.agent = a
	d.say("agent on the embedded runtime at %s, HTTP on %s", a.RuntimeEndpoint(), a.Addr())
	d.runtime, err = remote.NewRemoteRuntimeServiceBuilder().WithEndpoint(a.RuntimeEndpoint()).WithConnectionTimeout(5 * time.Second).Build(ctx)
	if err != nil {
		return err
	}
	defer d.runtime.Close(context.Background())
	if err := d.plantOrphan(ctx); err != nil {
		return err
	}

	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	ran := make(chan error, 1)
	go func() { ran <- a.Run(runCtx) }()
	scriptErr := d.script(ctx)
	if scriptErr != nil {
		cancel()
	}
	runErr := <-ran
	if err := errors.Join(scriptErr, runErr); err != nil {
		return err
	}

	d.heading("final state")
	if err := podtable.WriteStatus(w, a.Lifecycle()); err != nil {
		return err
	}
	d.heading("metrics")
	if err := writeMetrics(w, a.Registry()); err != nil {
		return err
	}
	d.heading("trace")
	return checkTrace(w, tw, traceFile, tracePath)
}

// script is the scenario; it returns once the node shut down.
func (d *demo) script(ctx context.Context) error {
	steps := []struct {
		title string
		run   func(context.Context) error
	}{
		{"an orphan of a previous run is stopped by the first housekeeping", d.orphan},
		{"manifests: three pods, one that does not fit, one bad file", d.create},
		{"update a running pod in place", d.update},
		{"a Never pod completes by itself", d.complete},
		{"kill with a grace period shorter than the pod's own", d.killWithGrace},
		{"force delete: manifest removed and grace 0", d.forceDelete},
		{"a static pod replaced under the same full name", d.replace},
		{"a runtime error during termination", d.runtimeError},
		{"graceful node shutdown, band by band", d.shutdown},
	}
	for _, s := range steps {
		d.step++
		d.heading(fmt.Sprintf("step %d: %s", d.step, s.title))
		if err := s.run(ctx); err != nil {
			return fmt.Errorf("step %d (%s): %w", d.step, s.title, err)
		}
	}
	return nil
}

// plantOrphan leaves a running sandbox with a pod UID nobody knows, as an
// agent killed before its pod stopped would.
func (d *demo) plantOrphan(ctx context.Context) error {
	_, err := d.runtime.RunPodSandbox(ctx, &runtimeapi.PodSandboxConfig{
		Metadata: &runtimeapi.PodSandboxMetadata{Name: "leftover", Namespace: "demo", Uid: orphanUID},
		Labels:   map[string]string{cri.PodUIDLabel: orphanUID, cri.PodNameLabel: "leftover", cri.PodNamespaceLabel: "demo"},
	}, "")
	return err
}

// containerIDs lists the running containers of a pod.
func (d *demo) containerIDs(ctx context.Context, uid string) ([]string, error) {
	cs, err := d.runtime.ListContainers(ctx, &runtimeapi.ContainerFilter{
		State:         &runtimeapi.ContainerStateValue{State: runtimeapi.ContainerState_CONTAINER_RUNNING},
		LabelSelector: map[string]string{cri.PodUIDLabel: uid},
	})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(cs))
	for _, c := range cs {
		ids = append(ids, c.Id)
	}
	return ids, nil
}

// waitFor polls the agent's pods until cond holds.
func (d *demo) waitFor(what string, cond func(pods map[types.UID]api.PodInfo) bool) error {
	deadline := time.Now().Add(d.timeout)
	for {
		pods := map[types.UID]api.PodInfo{}
		for _, p := range d.agent.Pods() {
			pods[p.UID] = p
		}
		if cond(pods) {
			d.say("ok: %s", what)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting until %s", d.timeout, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (d *demo) say(format string, args ...any) {
	d.out.printf("  %6.2fs  "+format+"\n", append([]any{time.Since(d.start).Seconds()}, args...)...)
}

func (d *demo) heading(s string) { d.out.printf("\n== %s\n", s) }

// lockedWriter serialises the script's and the engine's progress lines.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) printf(format string, args ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.w, format, args...)
}

// progress prints every change of a pod's lifecycle state as it happens.
type progress struct{ d *demo }

func (p *progress) Transition(t fsm.Transition) {
	if t.From != t.To {
		p.d.say("%-10s %-20s -> %s", podNames[string(t.Pod)], t.From, t.To)
	}
}

func (p *progress) Rejected(types.UID, fsm.State, fsm.Event, error) {}

package kuberuntime

// One sync's plan must cost less than one CRI call (issue 29). Both are
// measured in one run:
//
//	go test -run '^$' -bench 'BenchmarkPlan|BenchmarkCRICall' -benchmem -count 6 -timeout 15m ./cri/kuberuntime/
//
// BenchmarkPlan plans representative pods (podplan.ComputePodActions) from
// the view and the syncer's own inputs (planInput) that a real sync reads:
// each pod is brought to its state by the syncer on the embedded runtime,
// so its instances carry what a runtime reports (labels, spec hashes).
// BenchmarkCRICall is one call of those a sync makes (readPod), through the
// CRI client (k8s.io/cri-client) over a unix socket: to containerd when
// $PODLIFE_CRI_ENDPOINT names one, else to the embedded runtime's gRPC
// server.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
	testingclock "k8s.io/utils/clock/testing"

	"github.com/podlife/podlife/cri"
	"github.com/podlife/podlife/cri/embedded"
	"github.com/podlife/podlife/cri/podplan"
	"github.com/podlife/podlife/internal/crifake"
	"github.com/podlife/podlife/internal/critest"
)

// planScenarios are the pods BenchmarkPlan plans, each with the state the
// syncer brings it to and the plan it must get there.
var planScenarios = []struct {
	name string
	pod  func() *v1.Pod
	// drive brings the pod to the state planned.
	drive func(e *planEnv, pod *v1.Pod)
	want  string
}{
	{
		name:  "pod=1regular/running",
		pod:   func() *v1.Pod { return crifake.MakePod("one", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}) },
		drive: func(e *planEnv, pod *v1.Pod) { e.sync(pod) },
		want:  "sandbox 0 | initialized | init: - | containers: -",
	},
	{
		// The sidecar and the first init container are done, the second
		// init container runs: the regular containers wait.
		name: "pod=2init+1sidecar+3regular/mid-init",
		pod: func() *v1.Pod {
			return crifake.WithInits(crifake.MakePod("init", v1.RestartPolicyAlways,
				crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}, crifake.Ctr{Name: "c"}),
				crifake.Init{Name: "sc", Sidecar: true}, crifake.Init{Name: "i1"}, crifake.Init{Name: "i2"})
		},
		drive: func(e *planEnv, pod *v1.Pod) {
			for range 10 {
				e.sync(pod)
				if e.running(pod, "i2") {
					return
				}
				if e.running(pod, "i1") {
					e.exit(pod, "i1", 0)
				}
			}
			e.tb.Fatal("i2 never ran")
		},
		want: "sandbox 0 | init: - | containers: -",
	},
	{
		// The container failed twice: the second exit is in back-off.
		name: "pod=1regular/crash-loop-back-off",
		pod:  func() *v1.Pod { return crifake.MakePod("crash", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"}) },
		drive: func(e *planEnv, pod *v1.Pod) {
			e.sync(pod)
			e.exit(pod, "app", 1)
			e.sync(pod)
			e.exit(pod, "app", 1)
		},
		want: "sandbox 0 | initialized | init: - | containers: app back-off",
	},
	{
		// The sandbox died (its container with it): a new one is made.
		name: "pod=1sidecar+2regular/sandbox-changed",
		pod: func() *v1.Pod {
			return crifake.WithInits(crifake.MakePod("moved", v1.RestartPolicyAlways, crifake.Ctr{Name: "a"}, crifake.Ctr{Name: "b"}),
				crifake.Init{Name: "sc", Sidecar: true})
		},
		drive: func(e *planEnv, pod *v1.Pod) {
			e.sync(pod)
			e.sync(pod)
			view := e.view(pod)
			if err := e.rt.StopPodSandbox(context.Background(), view.Sandboxes[0].Id); err != nil {
				e.tb.Fatal(err)
			}
		},
		want: "new sandbox 1 | init: sc create | containers: -",
	},
}

func BenchmarkPlan(b *testing.B) {
	for _, sc := range planScenarios {
		b.Run(sc.name, func(b *testing.B) {
			e := newPlanEnv(b)
			pod := sc.pod()
			sc.drive(e, pod)
			in := e.s.planInput(pod, e.view(pod))
			if got := planSummary(podplan.ComputePodActions(in)); got != sc.want {
				b.Fatalf("plan of %s:\n got %s\nwant %s", sc.name, got, sc.want)
			}
			b.ReportAllocs()
			for b.Loop() {
				podplan.ComputePodActions(in)
			}
		})
	}
}

// planSummary is a plan in one line, for BenchmarkPlan's check.
func planSummary(a podplan.Actions) string {
	if a.Terminal {
		return "terminal: " + a.Why
	}
	parts := []string{fmt.Sprintf("sandbox %d", a.SandboxAttempt)}
	if a.CreateSandbox {
		parts[0] = "new " + parts[0]
	}
	if a.Initialized {
		parts = append(parts, "initialized")
	}
	for _, g := range []struct {
		what string
		as   []podplan.ContainerAction
	}{{"init", a.Init}, {"containers", a.Containers}} {
		s := make([]string, 0, len(g.as))
		for _, act := range g.as {
			s = append(s, act.String())
		}
		if len(s) == 0 {
			s = append(s, "-")
		}
		parts = append(parts, g.what+": "+strings.Join(s, "; "))
	}
	return strings.Join(parts, " | ")
}

// planEnv is a syncer on the embedded runtime whose clock stands still, so
// that a back-off planned stays in force while it is measured.
type planEnv struct {
	tb  testing.TB
	emb *embedded.Runtime
	rt  cri.Runtime
	s   *Syncer
}

func newPlanEnv(tb testing.TB) *planEnv {
	emb, rt, images := embeddedClients(tb)
	s := NewSyncer(rt, images, Options{Clock: testingclock.NewFakePassiveClock(time.Now())})
	tb.Cleanup(s.Close)
	return &planEnv{tb: tb, emb: emb, rt: rt, s: s}
}

func (e *planEnv) sync(pod *v1.Pod) {
	e.tb.Helper()
	if _, err := e.s.SyncPod(context.Background(), 0, pod, nil, nil); err != nil {
		e.tb.Fatalf("SyncPod(%s): %v", pod.Name, err)
	}
}

func (e *planEnv) view(pod *v1.Pod) *cri.PodRuntime {
	e.tb.Helper()
	p, err := readPod(context.Background(), e.rt, pod.UID)
	if err != nil {
		e.tb.Fatal(err)
	}
	return p
}

// running reports whether container name of pod has a running instance.
func (e *planEnv) running(pod *v1.Pod, name string) bool {
	e.tb.Helper()
	for _, c := range e.view(pod).Containers {
		if c.GetMetadata().GetName() == name && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			return true
		}
	}
	return false
}

// exit makes container name's running instance exit with code.
func (e *planEnv) exit(pod *v1.Pod, name string, code int32) {
	e.tb.Helper()
	for _, c := range e.view(pod).Containers {
		if c.GetMetadata().GetName() == name && c.State == runtimeapi.ContainerState_CONTAINER_RUNNING {
			if err := e.emb.ExitContainer(c.Id, code); err != nil {
				e.tb.Fatal(err)
			}
			return
		}
	}
	e.tb.Fatalf("no running instance of %s", name)
}

// BenchmarkCRICall measures, on a pod with one running container, the
// calls readPod makes: ListPodSandbox and ListContainers of the pod, and
// ContainerStatus of each container.
func BenchmarkCRICall(b *testing.B) {
	rt, runtimeName := benchRuntime(b)
	s := NewSyncer(rt.rt, rt.images, Options{LogRoot: b.TempDir()})
	b.Cleanup(s.Close)
	pod := benchPod(b, rt.image)
	ctx := context.Background()
	b.Cleanup(func() {
		gctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.SyncTerminatingPod(gctx, pod, nil, new(int64(0)), nil); err != nil {
			b.Errorf("cleanup: stop pod %s: %v", pod.UID, err)
		}
		s.RemoveDeadPod(pod.UID)
	})
	var ids []string
	for deadline := time.Now().Add(time.Minute); len(ids) == 0; {
		if _, err := s.SyncPod(ctx, 0, pod, nil, nil); err != nil {
			b.Fatalf("SyncPod: %v", err)
		}
		view, err := readPod(ctx, rt.rt, pod.UID)
		if err != nil {
			b.Fatal(err)
		}
		ids = view.RunningIDs()
		if time.Now().After(deadline) {
			b.Fatalf("%s: the pod's container does not run after a minute", runtimeName)
		}
	}
	selector := map[string]string{cri.PodUIDLabel: string(pod.UID)}
	for _, c := range []struct {
		name string
		call func() error
	}{
		{"ContainerStatus", func() error { _, err := rt.rt.ContainerStatus(ctx, ids[0], false); return err }},
		{"ListContainers", func() error {
			_, err := rt.rt.ListContainers(ctx, &runtimeapi.ContainerFilter{LabelSelector: selector})
			return err
		}},
		{"ListPodSandbox", func() error {
			_, err := rt.rt.ListPodSandbox(ctx, &runtimeapi.PodSandboxFilter{LabelSelector: selector})
			return err
		}},
	} {
		b.Run("runtime="+runtimeName+"/call="+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := c.call(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// benchClients are a runtime's CRI clients and the image its containers
// run.
type benchClients struct {
	rt     cri.Runtime
	images cri.Images
	image  string
}

// benchRuntime connects to containerd when $PODLIFE_CRI_ENDPOINT is set
// (holding it for the benchmark alone), else to an embedded runtime.
func benchRuntime(b *testing.B) (benchClients, string) {
	if os.Getenv(critest.EndpointEnv) != "" {
		critest.Exclusive(b)
		rt, images := critest.Connect(b)
		return benchClients{rt, images, critest.BusyboxImage}, "containerd"
	}
	b.Logf("%s is not set: calling the embedded runtime (tools/containerd-up.sh starts a containerd)", critest.EndpointEnv)
	_, rt, images := embeddedClients(b)
	return benchClients{rt, images, "img"}, "embedded"
}

// benchPod is a pod of one container that sleeps, in a namespace of its
// own, with a UID of its own (a runtime shared by several runs).
func benchPod(b *testing.B, image string) *v1.Pod {
	id := make([]byte, 8)
	_, _ = rand.Read(id)
	grace := int64(0)
	return &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: "bench", Namespace: "podlife-bench", UID: types.UID("bench-" + hex.EncodeToString(id))},
		Spec: v1.PodSpec{RestartPolicy: v1.RestartPolicyAlways, TerminationGracePeriodSeconds: &grace, Containers: []v1.Container{{
			Name: "app", Image: image, ImagePullPolicy: v1.PullIfNotPresent, Command: []string{"sleep", "3600"},
		}}},
	}
}

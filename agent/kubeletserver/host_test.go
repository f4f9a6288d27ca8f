package kubeletserver

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	fakecri "k8s.io/cri-api/pkg/apis/testing"
	statsv1alpha1 "k8s.io/kubelet/pkg/apis/stats/v1alpha1"

	"github.com/podlife/podlife/agent/server"
	"github.com/podlife/podlife/cri/logs"
)

// fakeHost is a node with one pod, ns/web (container app), whose log is
// the CRI-format file log; its streams answer with streamURL or streamErr
// and record what they were asked.
type fakeHost struct {
	health    string
	metrics   *prometheus.Registry
	probes    *prometheus.Registry
	log       string
	streamURL string
	streamErr error
	runOut    []byte

	asked []string // "exec ns/web app [sh] {...}" ...
}

func newFakeHost(t testing.TB) *fakeHost {
	dir := t.TempDir()
	log := filepath.Join(dir, "0.log")
	data := "2030-01-02T03:04:01.000000000Z stdout F one\n2030-01-02T03:04:02.000000000Z stdout F two\n2030-01-02T03:04:03.000000000Z stderr F three\n"
	if err := os.WriteFile(log, []byte(data), 0o600); err != nil {
		t.Fatal(err)
	}
	h := &fakeHost{metrics: prometheus.NewRegistry(), probes: prometheus.NewRegistry(), log: log, streamURL: "http://127.0.0.1:1/exec/token"}
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "podlife_test_total", Help: "a test counter"})
	c.Inc()
	h.metrics.MustRegister(c)
	p := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "prober_probe_total", Help: "probes"}, []string{"probe_type", "result"})
	p.WithLabelValues("Readiness", "successful").Add(3)
	h.probes.MustRegister(p)
	return h
}

func (h *fakeHost) HealthProblem() string              { return h.health }
func (h *fakeHost) Registry() *prometheus.Registry     { return h.metrics }
func (h *fakeHost) ProbeMetrics() *prometheus.Registry { return h.probes }

func (h *fakeHost) PodList() *v1.PodList {
	return &v1.PodList{TypeMeta: metav1.TypeMeta{Kind: "PodList", APIVersion: "v1"}, Items: []v1.Pod{{
		ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "web", UID: "uid-web"},
		Spec:       v1.PodSpec{Containers: []v1.Container{{Name: "app", Image: "img"}}},
	}}}
}

func (h *fakeHost) known(ref PodRef) error {
	if ref.Namespace != "ns" || ref.Name != "web" || (ref.UID != "" && ref.UID != "uid-web") {
		return server.NotFound("pod " + ref.Namespace + "/" + ref.Name + " is not one of this node's pods")
	}
	return nil
}

func (h *fakeHost) ContainerLog(_ context.Context, namespace, name, container string, _ bool) (*logs.ContainerLog, error) {
	if err := h.known(PodRef{Namespace: namespace, Name: name}); err != nil {
		return nil, err
	}
	if container != "" && container != "app" {
		return nil, server.NotFound("no container " + container)
	}
	// The fake runtime knows no container: a follow ends at the end of
	// the file, as for an instance that exited.
	return logs.NewContainerLog(h.log, fakecri.NewFakeRuntimeService(), "c1"), nil
}

func (h *fakeHost) stream(what string, ref PodRef, args ...any) (string, error) {
	if err := h.known(ref); err != nil {
		return "", err
	}
	words := []string{what, ref.Namespace + "/" + ref.Name}
	for _, a := range args {
		words = append(words, fmt.Sprint(a))
	}
	h.asked = append(h.asked, strings.Join(words, " "))
	return h.streamURL, h.streamErr
}

func (h *fakeHost) Exec(_ context.Context, ref PodRef, container string, cmd []string, o StreamOptions) (string, error) {
	return h.stream("exec", ref, container, cmd, o)
}

func (h *fakeHost) Attach(_ context.Context, ref PodRef, container string, o StreamOptions) (string, error) {
	return h.stream("attach", ref, container, o)
}

func (h *fakeHost) PortForward(_ context.Context, ref PodRef, ports []int32) (string, error) {
	return h.stream("portforward", ref, ports)
}

func (h *fakeHost) Run(_ context.Context, ref PodRef, container string, cmd []string) ([]byte, error) {
	if _, err := h.stream("run", ref, container, cmd); err != nil {
		return nil, err
	}
	return h.runOut, h.streamErr
}

// fakeStats is a stats provider with fixed figures.
type fakeStats struct{}

func (fakeStats) Summary(_ context.Context, onlyCPUAndMemory bool) (*statsv1alpha1.Summary, error) {
	s := &statsv1alpha1.Summary{Node: statsv1alpha1.NodeStats{NodeName: "n1"}}
	if !onlyCPUAndMemory {
		s.Pods = []statsv1alpha1.PodStats{{PodRef: statsv1alpha1.PodReference{Name: "web", Namespace: "ns", UID: "uid-web"}}}
	}
	return s, nil
}

func (fakeStats) ResourceMetrics() prometheus.Collector {
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "node_memory_working_set_bytes", Help: "test"})
	g.Set(42)
	return g
}

// testAuth authenticates "Authorization: Bearer <user>" as that user (no
// header: nobody) and allows what allowed lists as "user subresource".
func testAuth(allowed ...string) *Auth {
	return &Auth{
		Authenticator: authenticator.RequestFunc(func(r *http.Request) (*authenticator.Response, bool, error) {
			name, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok {
				return nil, false, nil
			}
			return &authenticator.Response{User: &user.DefaultInfo{Name: name}}, true, nil
		}),
		Authorizer: authorizer.AuthorizerFunc(func(_ context.Context, a authorizer.Attributes) (authorizer.Decision, string, error) {
			for _, rule := range allowed {
				u, sub, _ := strings.Cut(rule, " ")
				if u == a.GetUser().GetName() && (sub == "*" || sub == a.GetSubresource()) && a.GetName() == "n1" && a.GetResource() == "nodes" {
					return authorizer.DecisionAllow, "", nil
				}
			}
			return authorizer.DecisionNoOpinion, "", nil
		}),
	}
}

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }

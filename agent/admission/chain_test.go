package admission

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
)

// recorder returns handlers that log their name when called and reject with
// their name as the reason when it is in reject.
func recorder(calls *[]string, reject ...string) func(name string) Handler {
	return func(name string) Handler {
		return HandlerFunc(func(*v1.Pod, []*v1.Pod) Result {
			*calls = append(*calls, name)
			if slices.Contains(reject, name) {
				return Result{Reason: name, Message: "rejected by " + name}
			}
			return Result{Admit: true}
		})
	}
}

func TestRun(t *testing.T) {
	tests := []struct {
		name      string
		handlers  []string
		reject    []string
		want      Result
		wantCalls []string
	}{
		{name: "no handlers admit", want: Result{Admit: true}},
		{name: "all admit, all asked in order", handlers: []string{"a", "b", "c"},
			want: Result{Admit: true}, wantCalls: []string{"a", "b", "c"}},
		{name: "first rejection wins and stops the chain", handlers: []string{"a", "b", "c"}, reject: []string{"b", "c"},
			want: Result{Reason: "b", Message: "rejected by b"}, wantCalls: []string{"a", "b"}},
		{name: "order decides the reason", handlers: []string{"c", "b", "a"}, reject: []string{"b", "c"},
			want: Result{Reason: "c", Message: "rejected by c"}, wantCalls: []string{"c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var calls []string
			h := recorder(&calls, tt.reject...)
			var hs []Handler
			for _, n := range tt.handlers {
				hs = append(hs, h(n))
			}
			if got := Run(podOf("p"), nil, hs...); got != tt.want {
				t.Errorf("Run = %+v, want %+v", got, tt.want)
			}
			if !slices.Equal(calls, tt.wantCalls) {
				t.Errorf("calls = %v, want %v", calls, tt.wantCalls)
			}
		})
	}
}

func TestChainPassesPodAndActive(t *testing.T) {
	pod, active := podOf("p"), []*v1.Pod{podOf("a")}
	var seenPod *v1.Pod
	var seenActive []*v1.Pod
	NewChain(nil, HandlerFunc(func(p *v1.Pod, a []*v1.Pod) Result {
		seenPod, seenActive = p, a
		return Result{Admit: true}
	})).Admit(pod, active)
	if seenPod != pod || !slices.Equal(seenActive, active) {
		t.Errorf("handler saw %v %v, want the chain's arguments", seenPod, seenActive)
	}
}

func TestChainNests(t *testing.T) {
	var calls []string
	h := recorder(&calls, "inner2")
	inner := NewChain(nil, h("inner1"), h("inner2"))
	got := NewChain(nil, h("outer1"), inner, h("outer2")).Admit(podOf("p"), nil)
	if got.Admit || got.Reason != "inner2" {
		t.Errorf("Admit = %+v, want the inner rejection", got)
	}
	if want := []string{"outer1", "inner1", "inner2"}; !slices.Equal(calls, want) {
		t.Errorf("calls = %v, want %v", calls, want)
	}
}

func TestRejectionMetric(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	reason := ""
	c := NewChain(reg, HandlerFunc(func(*v1.Pod, []*v1.Pod) Result {
		if reason == "" {
			return Result{Admit: true}
		}
		return Result{Reason: reason}
	}))
	for _, r := range []string{"", "OutOfcpu", "OutOfcpu", "OutOfmemory", "NodeShutdown", "OutOfnvidia.com/gpu", "SomethingNew", "", "Evicted"} {
		reason = r
		c.Admit(podOf("p"), nil)
	}
	want := `
# HELP kubelet_admission_rejections_total Cumulative number of pods rejected by local admission, by reason.
# TYPE kubelet_admission_rejections_total counter
kubelet_admission_rejections_total{reason="Evicted"} 1
kubelet_admission_rejections_total{reason="NodeShutdown"} 1
kubelet_admission_rejections_total{reason="Other"} 1
kubelet_admission_rejections_total{reason="OutOfExtendedResources"} 1
kubelet_admission_rejections_total{reason="OutOfcpu"} 2
kubelet_admission_rejections_total{reason="OutOfmemory"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "kubelet_admission_rejections_total"); err != nil {
		t.Error(err)
	}
}

func TestChainWithoutRegistererCountsNothing(t *testing.T) {
	c := NewChain(nil, HandlerFunc(func(*v1.Pod, []*v1.Pod) Result { return Result{Reason: ReasonOutOfCPU} }))
	if got := c.Admit(podOf("p"), nil); got.Admit || got.Reason != ReasonOutOfCPU {
		t.Errorf("Admit = %+v, want the rejection", got)
	}
}

func TestChainOfResourceAdmitter(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := NewChain(reg, NewResourceAdmitter(Resources{MilliCPU: 1000, Memory: 1024 * mi}, 110))
	active := []*v1.Pod{podOf("a", ctr("800m", "100Mi"))}
	if got := c.Admit(podOf("fits", ctr("200m", "100Mi")), active); !got.Admit {
		t.Errorf("fitting pod rejected: %+v", got)
	}
	if got := c.Admit(podOf("big", ctr("300m", "100Mi")), active); got.Reason != ReasonOutOfCPU {
		t.Errorf("too big pod: %+v, want %s", got, ReasonOutOfCPU)
	}
	if n := testutil.ToFloat64(c.metrics.rejections.WithLabelValues(ReasonOutOfCPU)); n != 1 {
		t.Errorf("OutOfcpu rejections = %v, want 1", n)
	}
}

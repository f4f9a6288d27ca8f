package apistatus

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"

	"github.com/podlife/podlife/cri"
)

func TestStatusStopSignal(t *testing.T) {
	withSignal := func(sig v1.Signal) *v1.Container {
		return &v1.Container{Name: "a", Lifecycle: &v1.Lifecycle{StopSignal: &sig}}
	}
	for _, tc := range []struct {
		name    string
		c       *v1.Container
		runtime runtimeapi.Signal
		want    v1.Signal // "": none
	}{
		{"none anywhere", &v1.Container{Name: "a"}, runtimeapi.Signal_SIGNAL_RUNTIME_DEFAULT, ""},
		{"the spec's", withSignal(v1.SIGUSR1), runtimeapi.Signal_SIGNAL_RUNTIME_DEFAULT, v1.SIGUSR1},
		{"the spec's before the runtime's", withSignal(v1.SIGINT), runtimeapi.Signal_SIGNAL_SIGQUIT, v1.SIGINT},
		{"the image's, reported by the runtime", &v1.Container{Name: "a"}, runtimeapi.Signal_SIGNAL_SIGQUIT, v1.SIGQUIT},
		{"a real-time one", &v1.Container{Name: "a"}, runtimeapi.Signal_SIGNAL_SIGRTMINPLUS1, "SIGRTMIN+1"},
		{"a real-time one from the top", &v1.Container{Name: "a"}, runtimeapi.Signal_SIGNAL_SIGRTMAXMINUS2, "SIGRTMAX-2"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := statusStopSignal(tc.c, &runtimeapi.ContainerStatus{StopSignal: tc.runtime})
			if (got == nil) != (tc.want == "") || (got != nil && *got != tc.want) {
				t.Errorf("stop signal %v, want %q", got, tc.want)
			}
		})
	}
	// Every signal the CRI names goes back to itself.
	for v := range runtimeapi.Signal_name {
		sig := runtimeapi.Signal(v)
		name, ok := cri.APISignal(sig)
		if sig == runtimeapi.Signal_SIGNAL_RUNTIME_DEFAULT {
			if ok {
				t.Errorf("RUNTIME_DEFAULT is %q", name)
			}
			continue
		}
		if back, ok2 := cri.RuntimeSignal(name); !ok || !ok2 || back != sig {
			t.Errorf("%v -> %q -> %v", sig, name, back)
		}
	}
}

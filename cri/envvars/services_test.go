package envvars

import (
	"context"
	"errors"
	"slices"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/podlife/podlife/internal/crifake"
	"github.com/podlife/podlife/kubetypes"
)

func service(namespace, name, ip string, ports ...v1.ServicePort) *v1.Service {
	return &v1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name},
		Spec:       v1.ServiceSpec{ClusterIP: ip, Ports: ports},
	}
}

func TestFromServices(t *testing.T) {
	for _, tc := range []struct {
		name string
		svc  *v1.Service
		want []v1.EnvVar
	}{
		{"one unnamed TCP port", service("ns", "fooservice", "10.0.0.10", v1.ServicePort{Port: 8765, Protocol: v1.ProtocolTCP}), []v1.EnvVar{
			{Name: "FOOSERVICE_SERVICE_HOST", Value: "10.0.0.10"},
			{Name: "FOOSERVICE_SERVICE_PORT", Value: "8765"},
			{Name: "FOOSERVICE_PORT", Value: "tcp://10.0.0.10:8765"},
			{Name: "FOOSERVICE_PORT_8765_TCP", Value: "tcp://10.0.0.10:8765"},
			{Name: "FOOSERVICE_PORT_8765_TCP_PROTO", Value: "tcp"},
			{Name: "FOOSERVICE_PORT_8765_TCP_PORT", Value: "8765"},
			{Name: "FOOSERVICE_PORT_8765_TCP_ADDR", Value: "10.0.0.10"},
		}},
		{"named ports, the protocol defaulting to TCP, a dashed name", service("ns", "my-db", "10.0.0.11",
			v1.ServicePort{Name: "sql-main", Port: 5432}, v1.ServicePort{Name: "stats", Port: 9000, Protocol: v1.ProtocolUDP}), []v1.EnvVar{
			{Name: "MY_DB_SERVICE_HOST", Value: "10.0.0.11"},
			{Name: "MY_DB_SERVICE_PORT", Value: "5432"},
			{Name: "MY_DB_SERVICE_PORT_SQL_MAIN", Value: "5432"},
			{Name: "MY_DB_SERVICE_PORT_STATS", Value: "9000"},
			{Name: "MY_DB_PORT", Value: "tcp://10.0.0.11:5432"},
			{Name: "MY_DB_PORT_5432_TCP", Value: "tcp://10.0.0.11:5432"},
			{Name: "MY_DB_PORT_5432_TCP_PROTO", Value: "tcp"},
			{Name: "MY_DB_PORT_5432_TCP_PORT", Value: "5432"},
			{Name: "MY_DB_PORT_5432_TCP_ADDR", Value: "10.0.0.11"},
			{Name: "MY_DB_PORT_9000_UDP", Value: "udp://10.0.0.11:9000"},
			{Name: "MY_DB_PORT_9000_UDP_PROTO", Value: "udp"},
			{Name: "MY_DB_PORT_9000_UDP_PORT", Value: "9000"},
			{Name: "MY_DB_PORT_9000_UDP_ADDR", Value: "10.0.0.11"},
		}},
		{"IPv6 bracketed in the URLs only", service("ns", "v6", "fd00::10", v1.ServicePort{Port: 80, Protocol: v1.ProtocolSCTP}), []v1.EnvVar{
			{Name: "V6_SERVICE_HOST", Value: "fd00::10"},
			{Name: "V6_SERVICE_PORT", Value: "80"},
			{Name: "V6_PORT", Value: "sctp://[fd00::10]:80"},
			{Name: "V6_PORT_80_SCTP", Value: "sctp://[fd00::10]:80"},
			{Name: "V6_PORT_80_SCTP_PROTO", Value: "sctp"},
			{Name: "V6_PORT_80_SCTP_PORT", Value: "80"},
			{Name: "V6_PORT_80_SCTP_ADDR", Value: "fd00::10"},
		}},
		{"headless", service("ns", "headless", v1.ClusterIPNone, v1.ServicePort{Port: 80}), nil},
		{"no cluster IP (ExternalName)", service("ns", "external", "", v1.ServicePort{Port: 80}), nil},
		{"no port", service("ns", "portless", "10.0.0.12"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := FromServices([]*v1.Service{tc.svc}); !slices.Equal(got, tc.want) {
				t.Errorf("FromServices:\n got %v\nwant %v", got, tc.want)
			}
		})
	}
}

// fakeServices is a ServiceLister over a fixed list.
type fakeServices struct {
	unsynced bool
	err      error
	all      []*v1.Service
}

func (f fakeServices) HasSynced() bool { return !f.unsynced }

func (f fakeServices) Services(namespace string) ([]*v1.Service, error) {
	var out []*v1.Service
	for _, s := range f.all {
		if s.Namespace == namespace {
			out = append(out, s)
		}
	}
	return out, f.err
}

// clusterServices are the API server's Service, one in the pod's
// namespace "ns", a headless one there and one in another namespace.
var clusterServices = fakeServices{all: []*v1.Service{
	service("default", "kubernetes", "10.0.0.1", v1.ServicePort{Name: "https", Port: 443}),
	service("default", "other-default", "10.0.0.2", v1.ServicePort{Port: 80}),
	service("ns", "fooservice", "10.0.0.10", v1.ServicePort{Port: 8765}),
	service("ns", "headless", v1.ClusterIPNone, v1.ServicePort{Port: 80}),
	service("elsewhere", "far", "10.0.0.20", v1.ServicePort{Port: 80}),
}}

func TestContainerEnvServices(t *testing.T) {
	off := new(false)
	for _, tc := range []struct {
		name     string
		lister   ServiceLister
		links    *bool
		static   bool
		env      []v1.EnvVar
		want     map[string]string
		absent   []string
		wantErr  error
		errorful bool
	}{
		{name: "links by default: the namespace's and default/kubernetes", lister: clusterServices,
			want: map[string]string{
				"FOOSERVICE_SERVICE_HOST": "10.0.0.10", "FOOSERVICE_SERVICE_PORT": "8765",
				"FOOSERVICE_PORT": "tcp://10.0.0.10:8765", "FOOSERVICE_PORT_8765_TCP_ADDR": "10.0.0.10",
				"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_SERVICE_PORT": "443", "KUBERNETES_SERVICE_PORT_HTTPS": "443",
			},
			absent: []string{"HEADLESS_SERVICE_HOST", "FAR_SERVICE_HOST", "OTHER_DEFAULT_SERVICE_HOST"}},
		{name: "enableServiceLinks false: default/kubernetes only", lister: clusterServices, links: off,
			want:   map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.1", "KUBERNETES_PORT": "tcp://10.0.0.1:443"},
			absent: []string{"FOOSERVICE_SERVICE_HOST", "FOOSERVICE_PORT"}},
		{name: "the container's own variable wins", lister: clusterServices,
			env:  []v1.EnvVar{{Name: "FOOSERVICE_SERVICE_HOST", Value: "mine"}},
			want: map[string]string{"FOOSERVICE_SERVICE_HOST": "mine", "FOOSERVICE_SERVICE_PORT": "8765"}},
		{name: "a value's $(VAR) names the Services' variables", lister: clusterServices,
			env:  []v1.EnvVar{{Name: "ADDR", Value: "$(FOOSERVICE_SERVICE_HOST):$(FOOSERVICE_SERVICE_PORT)"}},
			want: map[string]string{"ADDR": "10.0.0.10:8765"}},
		{name: "an own variable shadows a Service's in $(VAR)", lister: clusterServices,
			env:  []v1.EnvVar{{Name: "FOOSERVICE_SERVICE_PORT", Value: "1"}, {Name: "ADDR", Value: "$(FOOSERVICE_SERVICE_PORT)"}},
			want: map[string]string{"ADDR": "1", "FOOSERVICE_SERVICE_PORT": "1"}},
		{name: "the namespace's kubernetes Service shadows default's", lister: fakeServices{all: append(slices.Clone(clusterServices.all),
			service("ns", "kubernetes", "10.0.0.99", v1.ServicePort{Port: 1}))},
			want: map[string]string{"KUBERNETES_SERVICE_HOST": "10.0.0.99", "KUBERNETES_SERVICE_PORT": "1"}},
		{name: "no lister (standalone): no Services", lister: nil,
			absent: []string{"KUBERNETES_SERVICE_HOST", "FOOSERVICE_SERVICE_HOST"}},
		{name: "not synced: an API pod waits", lister: fakeServices{unsynced: true, all: clusterServices.all},
			wantErr: ErrServicesNotSynced},
		{name: "not synced: a static pod goes on with what is read", lister: fakeServices{unsynced: true, all: clusterServices.all}, static: true,
			want: map[string]string{"FOOSERVICE_SERVICE_HOST": "10.0.0.10"}},
		{name: "a list error fails the container", lister: fakeServices{err: errors.New("boom")}, errorful: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
			pod.Spec.EnableServiceLinks = tc.links
			pod.Spec.Containers[0].Env = tc.env
			if tc.static {
				pod.Annotations = map[string]string{kubetypes.ConfigSourceAnnotation: "file"}
			}
			envs, err := ContainerEnv(context.Background(), Input{Pod: pod, Container: &pod.Spec.Containers[0], Services: tc.lister})
			switch {
			case tc.wantErr != nil || tc.errorful:
				if err == nil || (tc.wantErr != nil && !errors.Is(err, tc.wantErr)) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			seen := map[string]int{}
			for _, kv := range envs {
				seen[kv.Key]++
			}
			for name, n := range seen {
				if n > 1 {
					t.Errorf("%s set %d times", name, n)
				}
			}
			got := Vars(envs)
			for name, want := range tc.want {
				if v, ok := got[name]; !ok || v != want {
					t.Errorf("%s = %q (set %v), want %q", name, v, ok, want)
				}
			}
			for _, name := range tc.absent {
				if v, ok := got[name]; ok {
					t.Errorf("%s = %q, want it unset", name, v)
				}
			}
		})
	}
}

// TestServiceVarsExpandCommand checks a command's $(VAR) sees the
// Services' variables, as the kubelet expands command and args with the
// container's whole environment.
func TestServiceVarsExpandCommand(t *testing.T) {
	pod := crifake.MakePod("web", v1.RestartPolicyAlways, crifake.Ctr{Name: "app"})
	envs, err := ContainerEnv(context.Background(), Input{Pod: pod, Container: &pod.Spec.Containers[0], Services: clusterServices})
	if err != nil {
		t.Fatal(err)
	}
	got := ExpandAll([]string{"wget", "http://$(FOOSERVICE_SERVICE_HOST):$(FOOSERVICE_SERVICE_PORT)"}, Vars(envs))
	if want := []string{"wget", "http://10.0.0.10:8765"}; !slices.Equal(got, want) {
		t.Errorf("command = %v, want %v", got, want)
	}
}

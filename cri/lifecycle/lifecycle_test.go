package lifecycle

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

func TestHookURL(t *testing.T) {
	c := &v1.Container{Name: "a", Ports: []v1.ContainerPort{{Name: "web", ContainerPort: 8080}}}
	for _, tc := range []struct {
		name    string
		g       v1.HTTPGetAction
		want    string
		wantErr bool
	}{
		{"number", v1.HTTPGetAction{Port: intstr.FromInt32(80), Path: "/x"}, "http://10.0.0.1:80/x", false},
		{"named port", v1.HTTPGetAction{Port: intstr.FromString("web"), Path: "y"}, "http://10.0.0.1:8080/y", false},
		{"numeric string", v1.HTTPGetAction{Port: intstr.FromString("81")}, "http://10.0.0.1:81", false},
		{"https", v1.HTTPGetAction{Port: intstr.FromInt32(443), Scheme: v1.URISchemeHTTPS}, "https://10.0.0.1:443", false},
		{"unknown name", v1.HTTPGetAction{Port: intstr.FromString("nope")}, "", true},
		{"port out of range", v1.HTTPGetAction{Port: intstr.FromInt32(70000)}, "", true},
		{"bad scheme", v1.HTTPGetAction{Port: intstr.FromInt32(80), Scheme: "FTP"}, "", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			port, err := resolvePort(tc.g.Port, c)
			var u string
			if err == nil {
				u, err = hookURL(&tc.g, "10.0.0.1", port)
			}
			if u != tc.want || (err != nil) != tc.wantErr {
				t.Errorf("= %q, %v; want %q (error %v)", u, err, tc.want, tc.wantErr)
			}
		})
	}
}

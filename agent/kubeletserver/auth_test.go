package kubeletserver

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes/fake"
)

// A request's attributes, as the kubelet's nodeAuthorizerAttributesGetter
// (with fine-grained authorization, GA in 1.36) makes them: the verb from
// the method, nodes/<node>, and the subresources tried in order.
func TestRequestAttributes(t *testing.T) {
	tests := []struct {
		method, path string
		verb         string
		subresources string
	}{
		{"GET", "/pods", "get", "pods proxy"},
		{"GET", "/pods/", "get", "pods proxy"},
		{"GET", "/podsx", "get", "proxy"},
		{"GET", "/healthz", "get", "healthz proxy"},
		{"HEAD", "/healthz", "get", "healthz proxy"},
		{"GET", "/configz", "get", "configz proxy"},
		{"GET", "/stats/summary", "get", "stats"},
		{"GET", "/stats", "get", "stats"},
		{"GET", "/metrics", "get", "metrics"},
		{"GET", "/metrics/probes", "get", "metrics"},
		{"GET", "/metrics/resource", "get", "metrics"},
		{"GET", "/metricsx", "get", "proxy"},
		{"GET", "/logs/messages", "get", "log"},
		{"GET", "/containerLogs/ns/web/app", "get", "proxy"},
		{"POST", "/exec/ns/web/app", "create", "proxy"},
		{"GET", "/exec/ns/web/app", "get", "proxy"},
		{"POST", "/run/ns/web/app", "create", "proxy"},
		{"POST", "/portForward/ns/web", "create", "proxy"},
		{"PUT", "/attach/ns/web/app", "update", "proxy"},
		{"PATCH", "/pods", "patch", "pods proxy"},
		{"DELETE", "/pods", "delete", "pods proxy"},
		{"OPTIONS", "/pods", "", "pods proxy"},
	}
	u := &user.DefaultInfo{Name: "alice"}
	for _, tt := range tests {
		attrs := requestAttributes(u, httptest.NewRequest(tt.method, tt.path, nil), "n1")
		var subs []string
		for _, a := range attrs {
			subs = append(subs, a.GetSubresource())
			if a.GetVerb() != tt.verb || a.GetResource() != "nodes" || a.GetName() != "n1" || a.GetAPIVersion() != "v1" ||
				a.GetAPIGroup() != "" || a.GetNamespace() != "" || !a.IsResourceRequest() || a.GetUser() != u || a.GetPath() != tt.path {
				t.Errorf("%s %s: %+v, want verb %q on nodes/n1", tt.method, tt.path, a, tt.verb)
			}
		}
		if got := strings.Join(subs, " "); got != tt.subresources {
			t.Errorf("%s %s: subresources %q, want %q", tt.method, tt.path, got, tt.subresources)
		}
	}
}

// Standalone, the server needs a way to tell who asks; Webhook needs the
// API server.
func TestAuthConfigValidate(t *testing.T) {
	client := fake.NewClientset()
	tests := []struct {
		cfg AuthConfig
		err string
	}{
		{AuthConfig{Mode: ModeWebhook, Client: client}, ""},
		{AuthConfig{Mode: ModeAlwaysAllow, Client: client}, ""},
		{AuthConfig{Mode: ModeAlwaysAllow, ClientCAFile: "ca.crt"}, ""},
		{AuthConfig{Mode: ModeAlwaysAllow, Anonymous: true}, ""},
		{AuthConfig{Mode: ModeWebhook}, "no cluster (--kubeconfig)"},
		{AuthConfig{Mode: ModeWebhook, Anonymous: true, ClientCAFile: "ca.crt"}, "no cluster (--kubeconfig)"},
		{AuthConfig{Mode: ModeAlwaysAllow}, "needs --client-ca-file"},
		{AuthConfig{Mode: "RBAC", Client: client}, `authorization mode "RBAC"`},
	}
	for _, tt := range tests {
		err := tt.cfg.Validate()
		if fmt.Sprint(err == nil) != fmt.Sprint(tt.err == "") || (err != nil && !strings.Contains(err.Error(), tt.err)) {
			t.Errorf("%+v: %v, want %q", tt.cfg, err, tt.err)
		}
	}
}

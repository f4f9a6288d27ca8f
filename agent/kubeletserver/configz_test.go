package kubeletserver

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	kubeletconfigv1beta1 "k8s.io/kubelet/config/v1beta1"
	"k8s.io/utils/ptr"
)

// configzWrapper is how the node e2e suite (test/e2e_node's
// getCurrentKubeletConfig) reads /configz.
type configzWrapper struct {
	ComponentConfig kubeletconfigv1beta1.KubeletConfiguration `json:"kubeletconfig"`
}

// /configz is authorized as nodes/configz, else nodes/proxy (the
// kubelet's fine-grained authorization), answers GET only, and serves the
// configuration it was given in the kubelet's shape.
func TestConfigz(t *testing.T) {
	kc := &kubeletconfigv1beta1.KubeletConfiguration{
		StaticPodPath: "/etc/kubernetes/manifests", Port: 10250, HealthzPort: ptr.To[int32](10248),
		Authorization: kubeletconfigv1beta1.KubeletAuthorization{Mode: kubeletconfigv1beta1.KubeletAuthorizationModeWebhook},
	}
	s, err := newServer(newFakeHost(t), Config{NodeName: "n1", Configz: kc,
		Auth: testAuth("admin proxy", "reader configz", "eve pods", "eve healthz")})
	if err != nil {
		t.Fatal(err)
	}
	h := s.Handler()
	tests := []struct {
		name, method, user string
		code               int
		body               string
	}{
		{"no credentials", "GET", "", http.StatusUnauthorized, "Unauthorized"},
		{"not allowed", "GET", "eve", http.StatusForbidden, "Forbidden (user=eve, verb=get, resource=nodes, subresource(s)=[configz proxy])"},
		{"not allowed to post", "POST", "eve", http.StatusForbidden, "verb=create"},
		{"proxy", "GET", "admin", http.StatusOK, `{"kubeletconfig":{`},
		{"configz", "GET", "reader", http.StatusOK, `"staticPodPath":"/etc/kubernetes/manifests"`},
		{"GET only", "POST", "admin", http.StatusMethodNotAllowed, ""},
	}
	for _, tt := range tests {
		code, body := do(t, h, tt.method, ConfigzPath, tt.user, false)
		if code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("%s: %s /configz as %q = %d %q, want %d with %q", tt.name, tt.method, tt.user, code, body, tt.code, tt.body)
		}
	}
	_, body := do(t, h, "GET", ConfigzPath, "admin", false)
	var got configzWrapper
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("decode %q: %v", body, err)
	}
	c := got.ComponentConfig
	if c.StaticPodPath != kc.StaticPodPath || c.Port != 10250 || c.HealthzPort == nil || *c.HealthzPort != 10248 || c.Authorization.Mode != "Webhook" {
		t.Errorf("/configz decodes into %+v, want %+v", c, kc)
	}
}

// Without a configuration to serve there is no /configz.
func TestConfigzOff(t *testing.T) {
	if code, body := do(t, testHandler(t, newFakeHost(t), nil, "admin *"), "GET", ConfigzPath, "admin", false); code != http.StatusNotFound {
		t.Errorf("GET /configz without a configuration = %d %q, want 404", code, body)
	}
}

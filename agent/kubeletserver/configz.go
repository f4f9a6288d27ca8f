package kubeletserver

import (
	"encoding/json"
	"net/http"
)

// ConfigzPath is the kubelet's /configz (k8s.io/component-base/configz):
// the effective configuration, which the node e2e suite reads before any
// spec runs.
const ConfigzPath = "/configz"

// serveConfigz is GET /configz: {"kubeletconfig": <KubeletConfiguration>},
// the shape component-base/configz gives the kubelet's registration
// "kubeletconfig". Its own handler rather than component-base's, whose
// registry is global: agents in one process (tests) would collide.
func (s *Server) serveConfigz(w http.ResponseWriter, _ *http.Request) {
	body, err := json.Marshal(map[string]any{"kubeletconfig": s.cfg.Configz})
	if err != nil {
		http.Error(w, "configz: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(body)
}

package kubeletserver

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"testing"
)

// fuzzPaths are the routes the fuzzer's requests go to.
var fuzzPaths = []string{
	"/containerLogs/ns/web/app", "/containerLogs/ns/web", "/exec/ns/web/app", "/attach/ns/web/app",
	"/portForward/ns/web", "/run/ns/web/app", "/stats/summary", "/pods", "/healthz", "/metrics/probes",
}

// FuzzQuery sends any query string (and path suffix) to every route, as an
// upgrade or not, with any method: the server answers, never panics, and
// a bad parameter is a 400, never a 500. The seed corpus is in
// testdata/fuzz/FuzzQuery.
func FuzzQuery(f *testing.F) {
	f.Add(uint8(0), "", "tailLines=9223372036854775807&limitBytes=1", false)
	f.Add(uint8(0), "", "sinceSeconds=9223372036854775807&timestamps=true", false)
	f.Add(uint8(0), "", "sinceTime=2030-01-02T03:04:02Z&previous=false", false)
	f.Add(uint8(0), "", "follow=true&tailLines=0", false)
	f.Add(uint8(0), "", "tailLines=4611686018427387904&timestamps=true", false)
	f.Add(uint8(1), "", "tail=all&limitBytes=9223372036854775807&sinceSeconds=1", false)
	f.Add(uint8(0), "", "tailLines=-9223372036854775808&limitBytes=-1&stream=All", false)
	f.Add(uint8(2), "", "command=sh&input=1&output=1&tty=1", true)
	f.Add(uint8(2), "/x", "command=%00&stdin=true", true)
	f.Add(uint8(4), "", "port=0,65536&port=-1", true)
	f.Add(uint8(5), "", "cmd=++", false)
	f.Add(uint8(6), "", "only_cpu_and_memory=true", false)
	host := newFakeHost(f)
	backend := runtimeStreams(f)
	host.streamURL = backend + "/token"
	h := testHandler(f, host, fakeStats{}, "admin *")
	methods := []string{"GET", "POST", "PUT", "HEAD", "DELETE"}
	f.Fuzz(func(t *testing.T, route uint8, suffix, query string, upgrade bool) {
		path := fuzzPaths[int(route)%len(fuzzPaths)] + suffix
		u, err := url.Parse("https://n1:10250" + path)
		if err != nil {
			return // not a request a client can send
		}
		u.RawQuery = query
		r := httptest.NewRequest(methods[int(route)/len(fuzzPaths)%len(methods)], "https://n1:10250/", nil)
		r.URL = u
		r.RequestURI = u.RequestURI()
		r.Header.Set("Authorization", "Bearer admin")
		if upgrade {
			r.Header.Set("Connection", "Upgrade")
			r.Header.Set("Upgrade", "SPDY/3.1")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		allowed := []int{200, 301, 307, 400, 404, 405, 418, 503}
		if upgrade && !slices.Contains([]string{"/containerLogs", "/stats", "/pods", "/healthz", "/metrics"}, rootOf(path)) {
			allowed = append(allowed, http.StatusInternalServerError) // a recorder cannot be hijacked by the proxy
		}
		if !slices.Contains(allowed, w.Code) {
			t.Errorf("%s %s?%s (upgrade %v): %d %q", r.Method, path, query, upgrade, w.Code, w.Body.String())
		}
	})
}

// rootOf is the first element of a path, with its slash.
func rootOf(path string) string {
	for i := 1; i < len(path); i++ {
		if path[i] == '/' {
			return path[:i]
		}
	}
	return path
}

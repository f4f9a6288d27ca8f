// Package kubeletserver is the node agent's kubelet API: the HTTPS server
// on --port (10250 by default) that the API server, kubectl (logs, exec,
// attach, port-forward) and metrics-server talk to. Its kubelet
// counterpart is pkg/kubelet/server's Server with its auth filter
// (pkg/kubelet/server/auth.go) and the authentication and authorization
// built by cmd/kubelet/app/auth.go.
//
// Every request is authenticated (x509 client certificates against the
// client CA, bearer tokens through TokenReview, anonymous only when asked)
// and authorized (SubjectAccessReview, or AlwaysAllow when asked) with the
// kubelet's mapping of a request to the node's subresources (proxy, log,
// stats, metrics). It serves what the agent knows through Host and, for
// /stats/summary and /metrics/resource, through a StatsProvider.
//
// It is a package of its own, not part of agent/server: it is a separate
// listener with its own dependencies (TLS, k8s.io/apiserver's delegating
// authenticator and authorizer, the streaming proxy), none of which the
// local read-only endpoint and control socket need. It reuses
// agent/server's container log handler.
package kubeletserver

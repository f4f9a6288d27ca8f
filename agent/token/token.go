// Package token requests the service account tokens of the node's pods'
// projected volumes through the TokenRequest API and keeps them until they
// must be refreshed (kubelet: pkg/kubelet/token). A token is bound to its
// pod (the API server stops accepting it once the pod is deleted) and
// cached per namespace, service account, audiences, expiry and pod; it is
// requested again when it is older than 80% of its lifetime or than 24
// hours, so the file a container reads is always valid, and dropped once
// its pod is gone or it expired. The Node authorizer lets the node request
// tokens only for the service accounts of pods bound to it, bound to those
// pods.
package token

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	corev1 "k8s.io/client-go/kubernetes/typed/core/v1"
	"k8s.io/utils/clock"
)

// maxTTL is the age at which a token is refreshed whatever its lifetime:
// a token the API server made longer than asked (its extended tokens
// last a year) is still replaced daily, as the kubelet does.
const maxTTL = 24 * time.Hour

// Manager requests and caches tokens. Its methods may run concurrently.
type Manager struct {
	client corev1.ServiceAccountsGetter
	clock  clock.PassiveClock
	log    *slog.Logger

	mu    sync.Mutex
	cache map[key]*authenticationv1.TokenRequest
}

// key is what makes two token requests the same: the service account,
// the audiences, the expiry asked for and the object (the pod) it is
// bound to.
type key struct {
	namespace, name string
	audiences       string
	expiration      int64
	ref             authenticationv1.BoundObjectReference
}

// New returns a manager that requests tokens through client; clk nil is
// the real clock, log nil logs nothing.
func New(client corev1.ServiceAccountsGetter, clk clock.PassiveClock, log *slog.Logger) *Manager {
	if clk == nil {
		clk = clock.RealClock{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Manager{client: client, clock: clk, log: log, cache: map[key]*authenticationv1.TokenRequest{}}
}

// ServiceAccountToken returns a token of service account namespace/name
// for req's spec (audiences, expirationSeconds, boundObjectRef): the
// cached one while it is fresh, else a new one. When a refresh fails, the
// cached token is returned while it has not expired (the failure is
// logged and tried again at the next sync); with none, or an expired one,
// the error is returned.
func (m *Manager) ServiceAccountToken(ctx context.Context, namespace, name string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error) {
	k := keyOf(namespace, name, req)
	m.mu.Lock()
	cached, ok := m.cache[k]
	m.mu.Unlock()
	if ok && !m.needsRefresh(cached, req) {
		return cached, nil
	}
	tr, err := m.client.ServiceAccounts(namespace).CreateToken(ctx, name, &authenticationv1.TokenRequest{Spec: *req.Spec.DeepCopy()}, metav1.CreateOptions{})
	if err == nil && (tr == nil || tr.Status.Token == "") {
		err = fmt.Errorf("the API server returned no token")
	}
	if err != nil {
		err = fmt.Errorf("request a token for service account %s/%s: %w", namespace, name, err)
		switch {
		case !ok:
			return nil, err
		case m.expired(cached):
			return nil, fmt.Errorf("the cached token expired at %s and its refresh failed: %w", cached.Status.ExpirationTimestamp.UTC().Format(time.RFC3339), err)
		default:
			m.log.Warn("token refresh failed; the current token is still valid and is kept", "serviceAccount", namespace+"/"+name, "err", err)
			return cached, nil
		}
	}
	m.mu.Lock()
	m.cache[k] = tr
	m.mu.Unlock()
	return tr, nil
}

// keyOf is the cache key of a request for namespace/name.
func keyOf(namespace, name string, req *authenticationv1.TokenRequest) key {
	k := key{namespace: namespace, name: name, audiences: strings.Join(req.Spec.Audiences, "\x00")}
	if req.Spec.ExpirationSeconds != nil {
		k.expiration = *req.Spec.ExpirationSeconds
	}
	if req.Spec.BoundObjectRef != nil {
		k.ref = *req.Spec.BoundObjectRef
	}
	return k
}

// needsRefresh reports whether tr is older than 80% of its lifetime or
// than maxTTL. Its lifetime is the expirationSeconds the API server
// answered with (it may grant more than asked), else the one asked for.
func (m *Manager) needsRefresh(tr, req *authenticationv1.TokenRequest) bool {
	lifetime := tr.Spec.ExpirationSeconds
	if lifetime == nil {
		lifetime = req.Spec.ExpirationSeconds
	}
	if lifetime == nil {
		return m.expired(tr)
	}
	ttl := time.Duration(*lifetime) * time.Second
	exp := tr.Status.ExpirationTimestamp.Time
	issued := exp.Add(-ttl)
	now := m.clock.Now()
	return !now.Before(issued.Add(maxTTL)) || !now.Before(issued.Add(ttl*8/10))
}

// expired reports whether tr's expiration time has passed.
func (m *Manager) expired(tr *authenticationv1.TokenRequest) bool {
	return !m.clock.Now().Before(tr.Status.ExpirationTimestamp.Time)
}

// Retain drops the tokens of the pods keep does not keep (deleted pods:
// the kubelet's DeleteServiceAccountToken) and those that expired (its
// cleanup), so the cache holds no more than the node's pods need.
func (m *Manager) Retain(keep func(types.UID) bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for k, tr := range m.cache {
		if !keep(k.ref.UID) || m.expired(tr) {
			delete(m.cache, k)
		}
	}
}

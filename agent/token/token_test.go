package token

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	authenticationv1 "k8s.io/api/authentication/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	clocktesting "k8s.io/utils/clock/testing"
)

// tokenAPI is a fake TokenRequest API: it answers each request with a new
// token ("tok-1", "tok-2"...) that expires after the seconds asked for,
// or after grant seconds when set (the API server may grant more), or
// fails with fail when set.
type tokenAPI struct {
	client *fake.Clientset
	clock  *clocktesting.FakeClock
	grant  int64
	fail   error
	// requests are the token requests received, and for whom.
	requests []request
}

type request struct {
	namespace, name string
	spec            authenticationv1.TokenRequestSpec
}

func newTokenAPI(t *testing.T) *tokenAPI {
	t.Helper()
	api := &tokenAPI{client: fake.NewClientset(), clock: clocktesting.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))}
	api.client.PrependReactor("create", "serviceaccounts", func(a k8stesting.Action) (bool, runtime.Object, error) {
		create := a.(k8stesting.CreateAction)
		if a.GetSubresource() != "token" {
			return false, nil, nil
		}
		tr := create.GetObject().(*authenticationv1.TokenRequest)
		name := create.(k8stesting.CreateActionImpl).Name
		api.requests = append(api.requests, request{namespace: a.GetNamespace(), name: name, spec: tr.Spec})
		if api.fail != nil {
			return true, nil, api.fail
		}
		out := tr.DeepCopy()
		if api.grant != 0 {
			out.Spec.ExpirationSeconds = &api.grant
		}
		out.Status = authenticationv1.TokenRequestStatus{
			Token:               fmt.Sprintf("tok-%d", len(api.requests)),
			ExpirationTimestamp: metav1.NewTime(api.clock.Now().Add(time.Duration(*out.Spec.ExpirationSeconds) * time.Second)),
		}
		return true, out, nil
	})
	return api
}

// podRequest is the request of a projected volume of pod uid for a token
// lasting exp seconds for audience ("": the API server's).
func podRequest(uid types.UID, audience string, exp int64) *authenticationv1.TokenRequest {
	var auds []string
	if audience != "" {
		auds = []string{audience}
	}
	return &authenticationv1.TokenRequest{Spec: authenticationv1.TokenRequestSpec{
		Audiences: auds, ExpirationSeconds: &exp,
		BoundObjectRef: &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "pod-" + string(uid), UID: uid},
	}}
}

// The request is the one asked for, bound to the pod, for the service
// account; the answer is cached per pod, audience and expiry.
func TestRequestBoundAndCached(t *testing.T) {
	api := newTokenAPI(t)
	m := New(api.client.CoreV1(), api.clock, nil)
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		req       *authenticationv1.TokenRequest
		wantToken string
	}{
		{"first request", podRequest("uid-a", "", 600), "tok-1"},
		{"the same again: cached", podRequest("uid-a", "", 600), "tok-1"},
		{"another audience", podRequest("uid-a", "vault", 600), "tok-2"},
		{"another expiry", podRequest("uid-a", "", 3600), "tok-3"},
		{"another pod", podRequest("uid-b", "", 600), "tok-4"},
		{"the first pod's, still cached", podRequest("uid-a", "", 600), "tok-1"},
	} {
		tr, err := m.ServiceAccountToken(ctx, "ns", "sa", tc.req)
		if err != nil || tr.Status.Token != tc.wantToken {
			t.Errorf("%s: %v, %v; want %s", tc.name, tr, err, tc.wantToken)
		}
	}
	if len(api.requests) != 4 {
		t.Fatalf("%d requests; want 4", len(api.requests))
	}
	got := api.requests[1]
	if got.namespace != "ns" || got.name != "sa" || len(got.spec.Audiences) != 1 || got.spec.Audiences[0] != "vault" || *got.spec.ExpirationSeconds != 600 {
		t.Errorf("request %+v; want service account ns/sa, audience vault, 600 s", got)
	}
	if ref := got.spec.BoundObjectRef; ref == nil || *ref != (authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: "pod-uid-a", UID: "uid-a"}) {
		t.Errorf("bound object %+v; want the pod", ref)
	}
	if len(api.requests[0].spec.Audiences) != 0 {
		t.Errorf("audiences %q; want none (the API server's own)", api.requests[0].spec.Audiences)
	}
}

// A token is refreshed once it is 80% through its lifetime (the one the
// API server granted, which may be longer than asked), and after 24 h
// whatever its lifetime.
func TestRefresh(t *testing.T) {
	for _, tc := range []struct {
		name        string
		ask, grant  int64
		keep, renew time.Duration // still cached at keep, renewed at renew
	}{
		{"10 minutes: at 8", 600, 0, 8*time.Minute - time.Second, 8 * time.Minute},
		{"1 hour: at 48 minutes", 3600, 0, 48*time.Minute - time.Second, 48 * time.Minute},
		{"asked 1 hour, granted 2: at 96 minutes", 3600, 7200, 96*time.Minute - time.Second, 96 * time.Minute},
		{"granted a year: at 24 hours", 3600, 365 * 24 * 3600, 24*time.Hour - time.Second, 24 * time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			api := newTokenAPI(t)
			api.grant = tc.grant
			m := New(api.client.CoreV1(), api.clock, nil)
			start := api.clock.Now()
			get := func() string {
				tr, err := m.ServiceAccountToken(context.Background(), "ns", "sa", podRequest("uid", "", tc.ask))
				if err != nil {
					t.Fatal(err)
				}
				return tr.Status.Token
			}
			get()
			api.clock.SetTime(start.Add(tc.keep))
			if got := get(); got != "tok-1" {
				t.Errorf("at %v: %s; want the first token still", tc.keep, got)
			}
			api.clock.SetTime(start.Add(tc.renew))
			if got := get(); got != "tok-2" {
				t.Errorf("at %v: %s; want a new token", tc.renew, got)
			}
		})
	}
}

// A failed request is an error naming the service account; a failed
// refresh keeps the token while it is valid, and is an error once it
// expired.
func TestErrors(t *testing.T) {
	ctx := context.Background()
	api := newTokenAPI(t)
	m := New(api.client.CoreV1(), api.clock, nil)
	api.fail = apierrors.NewNotFound(schema.GroupResource{Resource: "serviceaccounts"}, "sa")
	_, err := m.ServiceAccountToken(ctx, "ns", "sa", podRequest("uid", "", 600))
	if err == nil || !strings.Contains(err.Error(), `request a token for service account ns/sa: serviceaccounts "sa" not found`) {
		t.Errorf("missing service account: %v", err)
	}
	api.fail = nil
	if _, err := m.ServiceAccountToken(ctx, "ns", "sa", podRequest("uid", "", 600)); err != nil {
		t.Fatal(err)
	}
	api.fail = apierrors.NewForbidden(schema.GroupResource{Resource: "serviceaccounts"}, "sa", fmt.Errorf("no relationship found"))
	start := api.clock.Now()
	api.clock.SetTime(start.Add(9 * time.Minute))
	if tr, err := m.ServiceAccountToken(ctx, "ns", "sa", podRequest("uid", "", 600)); err != nil || tr.Status.Token != "tok-2" {
		t.Errorf("refresh refused, token still valid: %v, %v; want tok-2 kept", tr, err)
	}
	api.clock.SetTime(start.Add(10 * time.Minute))
	_, err = m.ServiceAccountToken(ctx, "ns", "sa", podRequest("uid", "", 600))
	if err == nil || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), "forbidden") {
		t.Errorf("refresh refused, token expired: %v; want an error saying both", err)
	}
}

// Retain drops the tokens of pods no longer kept, and expired ones: they
// are requested anew.
func TestRetain(t *testing.T) {
	ctx := context.Background()
	api := newTokenAPI(t)
	m := New(api.client.CoreV1(), api.clock, nil)
	for _, uid := range []types.UID{"gone", "kept", "short"} {
		exp := int64(3600)
		if uid == "short" {
			exp = 600
		}
		if _, err := m.ServiceAccountToken(ctx, "ns", "sa", podRequest(uid, "", exp)); err != nil {
			t.Fatal(err)
		}
	}
	api.clock.Step(10 * time.Minute)
	m.Retain(func(uid types.UID) bool { return uid != "gone" })
	if len(m.cache) != 1 {
		t.Errorf("%d tokens cached after Retain; want 1 (kept)", len(m.cache))
	}
	before := len(api.requests)
	for _, tc := range []struct {
		uid  types.UID
		exp  int64
		want int // new requests
	}{{"kept", 3600, 0}, {"gone", 3600, 1}, {"short", 600, 1}} {
		if _, err := m.ServiceAccountToken(ctx, "ns", "sa", podRequest(tc.uid, "", tc.exp)); err != nil {
			t.Fatal(err)
		}
		if got := len(api.requests) - before; got != tc.want {
			t.Errorf("%s: %d new requests; want %d", tc.uid, got, tc.want)
		}
		before = len(api.requests)
	}
}

package clustertest

import (
	"context"
	"testing"

	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestNodeIdentity checks that a minted node identity is what the Node
// authorizer and NodeRestriction see: system:node:<name> in system:nodes,
// allowed its own Node and not another's, and not secrets.
func TestNodeIdentity(t *testing.T) {
	c := Require(t)
	name := c.NodeName(t)
	client := c.NodeClient(t, name)
	review, err := client.AuthenticationV1().SelfSubjectReviews().Create(context.Background(), &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
	if err != nil {
		t.Fatalf("self subject review: %v", err)
	}
	if got := review.Status.UserInfo.Username; got != "system:node:"+name {
		t.Errorf("user %q, want system:node:%s", got, name)
	}
	for _, tc := range []struct {
		attrs authorizationv1.ResourceAttributes
		want  bool
	}{
		{authorizationv1.ResourceAttributes{Verb: "create", Resource: "nodes"}, true},
		{authorizationv1.ResourceAttributes{Verb: "list", Resource: "secrets"}, false},
	} {
		r, err := client.AuthorizationV1().SelfSubjectAccessReviews().Create(context.Background(),
			&authorizationv1.SelfSubjectAccessReview{Spec: authorizationv1.SelfSubjectAccessReviewSpec{ResourceAttributes: &tc.attrs}}, metav1.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if r.Status.Allowed != tc.want {
			t.Errorf("%s %s: allowed %v, want %v", tc.attrs.Verb, tc.attrs.Resource, r.Status.Allowed, tc.want)
		}
	}
}

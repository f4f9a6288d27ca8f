package kubeletserver

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"errors"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/util/cache"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/authenticatorfactory"
	webhooktoken "k8s.io/apiserver/plugin/pkg/authenticator/token/webhook"
	authenticationclient "k8s.io/client-go/kubernetes/typed/authentication/v1"
)

// Bearer tokens are checked with a TokenReview, as the kubelet's
// delegating authenticator does, but the answers are cached by
// tokenReviews rather than by k8s.io/apiserver's cached token
// authenticator, which runs each review detached from its request for up
// to 30 s, caches refusals as long as acceptances and keeps as many as
// come: a client sending random tokens made one review per request, each
// outliving the request, on the agent's only API client. Here a review
// ends with its request, refusals are kept for less time in a cache of
// their own (a flood of them evicts no accepted token), both caches are
// bounded, and reviews beyond maxReviews are refused at once.

// The kubelet's webhook token cache (authentication.webhook.cacheTTL,
// 2 min) for accepted tokens; refused ones are kept as long as its denied
// authorizations (authorization.webhook.cacheUnauthorizedTTL, 30 s).
const (
	tokenCacheTTL        = 2 * time.Minute
	refusedTokenCacheTTL = 30 * time.Second
	// The caches' sizes: a few hundred clients' tokens, and the refusals
	// of a flood's last moments.
	acceptedTokens = 1024
	refusedTokens  = 4096
	// maxReviews bounds the TokenReviews in flight: the legitimate
	// clients' tokens (metrics-server's, Prometheus') are few and cached.
	maxReviews = 8
	// tokenReviewTimeout bounds one TokenReview: k8s.io/apiserver's
	// delegated authentication's TokenRequestTimeout default.
	tokenReviewTimeout = 10 * time.Second
)

// ErrTooManyReviews is a token not reviewed because maxReviews are in
// flight: the request is refused at once (429), not queued.
var ErrTooManyReviews = errors.New("too many token reviews in flight")

// tokenReviews is an authenticator.Token that asks review, caching its
// answers and bounding the reviews in flight.
type tokenReviews struct {
	review            authenticator.Token
	accepted, refused *cache.LRUExpireCache
	hashKey           []byte
	slots             chan struct{}
}

// cachedAnswer is a review's answer: the user, or the refusal's reason
// (nil: none given).
type cachedAnswer struct {
	resp    *authenticator.Response
	refusal error
}

// answeredKey marks a review's context with whether the API server
// answered it: the webhook returns a refusal with a reason (as the API
// server gives for an unknown token, "invalid bearer token") as an error,
// which only this tells from a failure to ask.
type answeredKey struct{}

// newTokenReviews asks client's TokenReview API, each review bounded by
// timeout and retried as webhookBackoff says within the request's
// lifetime.
func newTokenReviews(client authenticationclient.AuthenticationV1Interface, timeout time.Duration) (*tokenReviews, error) {
	authenticatorfactory.RegisterMetrics()
	review, err := webhooktoken.NewFromInterface(client, nil, *webhookBackoff(), timeout, webhooktoken.AuthenticatorMetrics{
		RecordRequestTotal: func(ctx context.Context, code string) {
			authenticatorfactory.RecordRequestTotal(ctx, code)
			if answered, ok := ctx.Value(answeredKey{}).(*atomic.Bool); ok && (code == "200" || code == "201") {
				answered.Store(true)
			}
		},
		RecordRequestLatency: authenticatorfactory.RecordRequestLatency,
	})
	if err != nil {
		return nil, err
	}
	return newTokenReviewsOf(review, maxReviews), nil
}

func newTokenReviewsOf(review authenticator.Token, slots int) *tokenReviews {
	key := make([]byte, 32)
	_, _ = rand.Read(key) // crypto/rand never fails
	return &tokenReviews{
		review: review, hashKey: key, slots: make(chan struct{}, slots),
		accepted: cache.NewLRUExpireCache(acceptedTokens), refused: cache.NewLRUExpireCache(refusedTokens),
	}
}

// key is the cache's key of token: its keyed hash, so that the cache
// holds no token.
func (c *tokenReviews) key(token string) string {
	h := hmac.New(sha256.New, c.hashKey)
	h.Write([]byte(token))
	return string(h.Sum(nil))
}

// AuthenticateToken answers from the caches, else reviews token in a
// free slot with ctx, the request's. An error (the API server's, or the
// request gone) is not cached.
func (c *tokenReviews) AuthenticateToken(ctx context.Context, token string) (*authenticator.Response, bool, error) {
	key := c.key(token)
	if v, ok := c.accepted.Get(key); ok {
		return v.(cachedAnswer).resp, true, nil
	}
	if v, ok := c.refused.Get(key); ok {
		return nil, false, v.(cachedAnswer).refusal
	}
	select {
	case c.slots <- struct{}{}:
	default:
		return nil, false, ErrTooManyReviews
	}
	defer func() { <-c.slots }()
	answered := new(atomic.Bool)
	resp, ok, err := c.review.AuthenticateToken(context.WithValue(ctx, answeredKey{}, answered), token)
	switch {
	case ok:
		c.accepted.Add(key, cachedAnswer{resp: resp}, tokenCacheTTL)
	case answered.Load():
		c.refused.Add(key, cachedAnswer{refusal: err}, refusedTokenCacheTTL)
	}
	return resp, ok, err
}

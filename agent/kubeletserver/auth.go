package kubeletserver

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/time/rate"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/apiserver/pkg/authentication/group"
	anonymousauth "k8s.io/apiserver/pkg/authentication/request/anonymous"
	"k8s.io/apiserver/pkg/authentication/request/bearertoken"
	"k8s.io/apiserver/pkg/authentication/request/union"
	"k8s.io/apiserver/pkg/authentication/request/websocket"
	"k8s.io/apiserver/pkg/authentication/request/x509"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/authorization/authorizerfactory"
	"k8s.io/apiserver/pkg/server/dynamiccertificates"
	"k8s.io/client-go/kubernetes"
)

// The authorization modes, as the kubelet's --authorization-mode.
const (
	ModeWebhook     = "Webhook"
	ModeAlwaysAllow = "AlwaysAllow"
)

// AuthConfig is how requests are authenticated and authorized, as the
// kubelet's KubeletAuthentication and KubeletAuthorization.
type AuthConfig struct {
	// ClientCAFile is the CA bundle that signs the client certificates
	// accepted (their CN is the user, their O the groups); "" accepts
	// none. The file is read again when it changes.
	ClientCAFile string
	// Anonymous lets requests with no credentials through as
	// system:anonymous (then authorized like any other user).
	Anonymous bool
	// Mode is ModeWebhook (SubjectAccessReview) or ModeAlwaysAllow.
	Mode string
	// Client asks the API server's TokenReview and SubjectAccessReview;
	// nil standalone: no bearer tokens, and Webhook is refused.
	Client kubernetes.Interface

	// reviewTimeout bounds each TokenReview; 0: tokenReviewTimeout (a
	// test's seam).
	reviewTimeout time.Duration
}

// The kubelet's defaults for its authorization webhook's cache (the token
// cache's are tokenreview.go's).
const (
	allowCacheTTL = 5 * time.Minute
	denyCacheTTL  = 30 * time.Second
)

// webhookBackoff is the apiserver's DefaultAuthWebhookRetryBackoff: a
// TokenReview or SubjectAccessReview that fails is tried five times over
// about 4 s.
func webhookBackoff() *wait.Backoff {
	return &wait.Backoff{Duration: 500 * time.Millisecond, Factor: 1.5, Jitter: 0.2, Steps: 5}
}

// Validate names what is wrong with the configuration.
func (c AuthConfig) Validate() error {
	switch c.Mode {
	case ModeWebhook:
		if c.Client == nil {
			return errors.New("authorization mode Webhook asks the API server (SubjectAccessReview), and there is no cluster (--kubeconfig): standalone, use --authorization-mode AlwaysAllow with --client-ca-file")
		}
	case ModeAlwaysAllow:
		if c.Client == nil && c.ClientCAFile == "" && !c.Anonymous {
			return errors.New("authorization mode AlwaysAllow without a cluster needs --client-ca-file (or, to let anyone in, --anonymous-auth)")
		}
	default:
		return fmt.Errorf("authorization mode %q: want %s or %s", c.Mode, ModeWebhook, ModeAlwaysAllow)
	}
	return nil
}

// Auth is a built authenticator and authorizer.
type Auth struct {
	Authenticator authenticator.Request
	Authorizer    authorizer.Authorizer
	// run reloads the client CA file until ctx ends; nil: nothing to run.
	run func(ctx context.Context)
}

// BuildAuth builds the kubelet's authenticator (x509 client certificates,
// bearer tokens through a cached TokenReview, anonymous if asked) and
// authorizer (a cached SubjectAccessReview, or always allow), as
// cmd/kubelet/app's BuildAuth does with k8s.io/apiserver's delegating
// ones, but for the tokens' cache (tokenReviews).
func BuildAuth(c AuthConfig) (*Auth, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	a := &Auth{}
	// authenticatorfactory.DelegatingAuthenticatorConfig's union, with
	// tokenReviews for its token cache.
	var authenticators []authenticator.Request
	if c.ClientCAFile != "" {
		ca, err := dynamiccertificates.NewDynamicCAContentFromFile("client-ca-bundle", c.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file %s: %w", c.ClientCAFile, err)
		}
		authenticators = append(authenticators, x509.NewDynamic(ca.VerifyOptions, x509.CommonNameUserConversion))
		a.run = func(ctx context.Context) { ca.Run(ctx, 1) }
	}
	if c.Client != nil {
		tokens, err := newTokenReviews(c.Client.AuthenticationV1(), cmp.Or(c.reviewTimeout, tokenReviewTimeout))
		if err != nil {
			return nil, fmt.Errorf("kubelet API authentication: %w", err)
		}
		authenticators = append(authenticators, bearertoken.New(tokens), websocket.NewProtocolAuthenticator(tokens))
	}
	anonymous := anonymousauth.NewAuthenticator(nil)
	switch {
	case len(authenticators) > 0 && c.Anonymous:
		a.Authenticator = union.NewFailOnError(group.NewAuthenticatedGroupAdder(union.New(authenticators...)), anonymous)
	case len(authenticators) > 0:
		a.Authenticator = group.NewAuthenticatedGroupAdder(union.New(authenticators...))
	case c.Anonymous:
		a.Authenticator = anonymous
	default:
		return nil, errors.New("kubelet API authentication: no authentication method configured")
	}
	var err error
	switch c.Mode {
	case ModeAlwaysAllow:
		a.Authorizer = authorizerfactory.NewAlwaysAllowAuthorizer()
	case ModeWebhook:
		authz := authorizerfactory.DelegatingAuthorizerConfig{
			SubjectAccessReviewClient: c.Client.AuthorizationV1(),
			AllowCacheTTL:             allowCacheTTL,
			DenyCacheTTL:              denyCacheTTL,
			WebhookRetryBackoff:       webhookBackoff(),
		}
		if a.Authorizer, err = authz.New(); err != nil {
			return nil, fmt.Errorf("kubelet API authorization: %w", err)
		}
	}
	return a, nil
}

// The paths whose requests are authorized as a subresource of their own
// (pkg/kubelet/server/auth.go); every other path is nodes/proxy.
var subresourcePaths = []struct{ path, subresource string }{
	{"/stats", "stats"},
	{"/metrics", "metrics"},
	{"/logs", "log"},
}

// The paths that are also authorized by a fine-grained subresource of
// their own before nodes/proxy (the kubelet's KubeletFineGrainedAuthz).
var fineGrainedPaths = []struct{ path, subresource string }{
	{"/pods", "pods"},
	{"/healthz", "healthz"},
	{"/configz", "configz"},
}

// isSubpath reports whether path is root or under it.
func isSubpath(path, root string) bool {
	return path == root || strings.HasPrefix(path, root+"/")
}

// requestAttributes are the authorizer's attributes for a request by u to
// the node nodeName, as the kubelet's nodeAuthorizerAttributesGetter: the
// verb from the HTTP method, resource nodes, the node's name, and the
// subresources to try in order (any one allowed lets the request in).
func requestAttributes(u user.Info, r *http.Request, nodeName string) []authorizer.Attributes {
	verb := ""
	switch r.Method {
	case http.MethodPost:
		verb = "create"
	case http.MethodGet, http.MethodHead:
		verb = "get"
	case http.MethodPut:
		verb = "update"
	case http.MethodPatch:
		verb = "patch"
	case http.MethodDelete:
		verb = "delete"
	}
	path := r.URL.Path
	var subresources []string
	for _, p := range fineGrainedPaths {
		if isSubpath(path, p.path) {
			subresources = append(subresources, p.subresource)
		}
	}
	last := "proxy"
	for _, p := range subresourcePaths {
		if isSubpath(path, p.path) {
			last = p.subresource
			break
		}
	}
	subresources = append(subresources, last)
	attrs := make([]authorizer.Attributes, 0, len(subresources))
	for _, sub := range subresources {
		attrs = append(attrs, authorizer.AttributesRecord{
			User: u, Verb: verb, APIVersion: "v1", Resource: "nodes", Subresource: sub,
			Name: nodeName, ResourceRequest: true, Path: path,
		})
	}
	return attrs
}

// authFilter lets through to next only the requests whose user is
// authenticated (else 401) and allowed one of the request's attributes
// (else 403, in the kubelet's words).
func (s *Server) authFilter(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, ok, err := s.auth.Authenticator.AuthenticateRequest(r)
		if err != nil || !ok {
			s.refuse(w, r, err)
			return
		}
		authenticated(r.Context())
		attrs := requestAttributes(resp.User, r, s.cfg.NodeName)
		var subresources []string
		for _, attr := range attrs {
			subresources = append(subresources, attr.GetSubresource())
			decision, _, err := s.auth.Authorizer.Authorize(r.Context(), attr)
			if err != nil {
				s.log.Warn("kubelet API: authorization error", "user", attr.GetUser().GetName(), "verb", attr.GetVerb(), "subresource", attr.GetSubresource(), "err", err)
				http.Error(w, fmt.Sprintf("Authorization error (user=%s, verb=%s, resource=%s, subresource=%s)",
					attr.GetUser().GetName(), attr.GetVerb(), attr.GetResource(), attr.GetSubresource()), http.StatusInternalServerError)
				return
			}
			if decision == authorizer.DecisionAllow {
				next.ServeHTTP(w, r)
				return
			}
		}
		s.log.Debug("kubelet API: forbidden", "user", resp.User.GetName(), "verb", attrs[0].GetVerb(), "subresources", subresources)
		http.Error(w, fmt.Sprintf("Forbidden (user=%s, verb=%s, resource=%s, subresource(s)=%v)",
			resp.User.GetName(), attrs[0].GetVerb(), attrs[0].GetResource(), subresources), http.StatusForbidden)
	})
}

// How many lines of failed authentications are logged: a burst, then one
// every failureLogEvery, each saying how many were left out. The
// authentication_failures_total metric counts them all.
const (
	failureLogBurst = 5
	failureLogEvery = 10 * time.Second
)

// refuse answers a request that did not authenticate: 429 with a
// Retry-After when its token was not reviewed for the reviews in flight,
// else 401.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, err error) {
	reason, code := "unauthorized", http.StatusUnauthorized
	switch {
	case errors.Is(err, ErrTooManyReviews):
		reason, code = "too_many_reviews", http.StatusTooManyRequests
	case errors.Is(err, context.Canceled):
		reason = "canceled"
	}
	s.authFailures.WithLabelValues(reason).Inc()
	if left, ok := s.failureLog.allow(); ok {
		s.log.Info("kubelet API: authentication failed", "path", r.URL.Path, "remote", r.RemoteAddr, "reason", reason, "err", err, "leftOut", left)
	}
	if code == http.StatusTooManyRequests {
		w.Header().Set("Retry-After", "1")
		http.Error(w, "Too many requests, please try again later.", code)
		return
	}
	http.Error(w, "Unauthorized", code)
}

// sometimes lets a burst of events through, then one every interval
// (golang.org/x/time/rate), and counts the others.
type sometimes struct {
	limit *rate.Limiter
	left  atomic.Int64
}

func newSometimes(burst int, every time.Duration) *sometimes {
	return &sometimes{limit: rate.NewLimiter(rate.Every(every), burst)}
}

// allow reports whether this event is let through, and how many were not
// since the last that was.
func (l *sometimes) allow() (left int64, ok bool) {
	if !l.limit.Allow() {
		l.left.Add(1)
		return 0, false
	}
	return l.left.Swap(0), true
}

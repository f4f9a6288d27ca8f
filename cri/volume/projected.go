package volume

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"

	"github.com/podlife/podlife/cri/envvars"
)

// A projected volume (the kubelet's projected plugin) is one directory of
// files from several sources: a service account token bound to the pod,
// a Secret's or a ConfigMap's keys (objects.go) and the downward API's
// values. Every pod of a cluster with the ServiceAccount admission plugin
// has one, kube-api-access-*: the token, the kube-root-ca.crt ConfigMap's
// ca.crt and the namespace. Its files are collected at every sync and
// written atomically, so a refreshed token or a changed object reaches a
// running container. Like the kubelet's, it is a tmpfs: its token and
// Secrets are never written to the node's disk.

// TokenGetter requests a service account's token, bound to a pod, from
// the TokenRequest API and caches it until it must be refreshed (the
// kubelet's token manager, agent/token). It has the kubelet's
// GetServiceAccountToken signature.
type TokenGetter interface {
	ServiceAccountToken(ctx context.Context, namespace, name string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// API is what the volumes read from the API server. In standalone mode
// all are nil, and the pods are static pods, which may not reference API
// objects anyway (agent/manifests refuses them, as the kubelet does).
type API struct {
	Tokens     TokenGetter
	ConfigMaps ConfigMapGetter
	Secrets    SecretGetter
}

const (
	projectedPlugin = "kubernetes.io~projected"
	// ownedTokenMode is a token's mode when the pod has a fsGroup or a
	// common runAsUser (the kubelet's rule: the fsGroup's change makes it
	// 0640, and the user owns it).
	ownedTokenMode = 0o600
	// defaultTokenExpiration is the API's default expirationSeconds of a
	// serviceAccountToken source, minTokenExpiration its validation's
	// minimum.
	defaultTokenExpiration = 3600
	minTokenExpiration     = 600
)

// sourceField is the field path of the j-th source of the i-th volume,
// as the API's validation names it.
func sourceField(i, j int) string {
	return fmt.Sprintf("spec.volumes[%d].projected.sources[%d]", i, j)
}

// checkProjected refuses the sources podlife cannot project
// (clusterTrustBundle and podCertificate), paths that leave the volume,
// and file owners (defaultUser, user). i is the volume's index.
func checkProjected(i int, src *v1.ProjectedVolumeSource) error {
	if err := checkMode(src.DefaultMode); err != nil {
		return fmt.Errorf("spec.volumes[%d].projected.defaultMode: %w", i, err)
	}
	if src.DefaultUser != nil {
		return fmt.Errorf("spec.volumes[%d].projected.defaultUser: %w", i, errUserFields)
	}
	for j := range src.Sources {
		s := &src.Sources[j]
		field := sourceField(i, j)
		var err error
		switch {
		case s.ClusterTrustBundle != nil:
			return fmt.Errorf("%s.clusterTrustBundle: projected cluster trust bundles are not supported by podlife", field)
		case s.PodCertificate != nil:
			return fmt.Errorf("%s.podCertificate: projected pod certificates are not supported by podlife", field)
		case s.ServiceAccountToken != nil:
			field += ".serviceAccountToken"
			tok := s.ServiceAccountToken
			switch {
			case tok.ExpirationSeconds != nil && *tok.ExpirationSeconds < minTokenExpiration:
				err = fmt.Errorf("%s.expirationSeconds: %d is less than %d seconds", field, *tok.ExpirationSeconds, minTokenExpiration)
			case tok.User != nil:
				err = fmt.Errorf("%s.user: %w", field, errUserFields)
			case !filePath(tok.Path):
				err = fmt.Errorf("%s.path: %q must be a relative path without \"..\" and no element starting with \"..\"", field, tok.Path)
			}
		case s.Secret != nil:
			err = checkKeyItems(field+".secret", s.Secret.Items)
		case s.ConfigMap != nil:
			err = checkKeyItems(field+".configMap", s.ConfigMap.Items)
		case s.DownwardAPI != nil:
			field += ".downwardAPI"
			for k, item := range s.DownwardAPI.Items {
				if err = checkMode(item.Mode); err != nil {
					return fmt.Errorf("%s.items[%d].mode: %w", field, k, err)
				}
				if !filePath(item.Path) {
					return fmt.Errorf("%s.items[%d].path: %q must be a relative path without \"..\" and no element starting with \"..\"", field, k, item.Path)
				}
			}
		default:
			return fmt.Errorf("%s: no source type is set", field)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// checkMode refuses a mode that is not a file mode.
func checkMode(mode *int32) error {
	if mode != nil && (*mode < 0 || *mode > 0o777) {
		return fmt.Errorf("%#o is not a file mode (0 to 0777)", *mode)
	}
	return nil
}

// projectedFiles are a projected volume's files, source by source (a later
// source's file wins a path both have, as in the kubelet). i is the
// volume's index, for the field paths of errors.
func projectedFiles(ctx context.Context, pod *v1.Pod, i int, src *v1.ProjectedVolumeSource, allocatable v1.ResourceList, api API) (map[string]volumeFile, error) {
	mode := int32(defaultObjectMode)
	if src.DefaultMode != nil {
		mode = *src.DefaultMode
	}
	files := map[string]volumeFile{}
	for j := range src.Sources {
		s := &src.Sources[j]
		var part map[string]volumeFile
		var err error
		field := sourceField(i, j)
		switch {
		case s.ServiceAccountToken != nil:
			field += ".serviceAccountToken"
			part, err = tokenFile(ctx, pod, s.ServiceAccountToken, mode, api.Tokens)
		case s.Secret != nil:
			field += ".secret"
			part, err = objectFiles(ctx, pod, secretRef(s.Secret.Name, s.Secret.Items, s.Secret.Optional), mode, api)
		case s.ConfigMap != nil:
			field += ".configMap"
			part, err = objectFiles(ctx, pod, configMapRef(s.ConfigMap.Name, s.ConfigMap.Items, s.ConfigMap.Optional), mode, api)
		case s.DownwardAPI != nil:
			field += ".downwardAPI"
			part, err = downwardAPIItemFiles(pod, s.DownwardAPI.Items, mode, allocatable)
		default:
			err = errors.New("not supported by podlife")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", field, err)
		}
		maps.Copy(files, part)
	}
	return files, nil
}

// tokenFile is the file of a serviceAccountToken source: a token of the
// pod's service account for the source's audience (none: the API server's
// own) and expiry, bound to the pod, so it stops being valid when the pod
// is deleted. With a fsGroup or a runAsUser common to every container it
// is 0600 (and the fsGroup's change makes it 0640), owned by that user, as
// the kubelet writes it: the token is not for the pod's other users.
func tokenFile(ctx context.Context, pod *v1.Pod, src *v1.ServiceAccountTokenProjection, mode int32, tokens TokenGetter) (map[string]volumeFile, error) {
	if tokens == nil {
		return nil, envvars.ErrNoAPI
	}
	sa := pod.Spec.ServiceAccountName
	if sa == "" {
		return nil, errors.New("the pod has no spec.serviceAccountName to request a token for")
	}
	exp := int64(defaultTokenExpiration)
	if src.ExpirationSeconds != nil {
		exp = *src.ExpirationSeconds
	}
	var audiences []string
	if src.Audience != "" {
		audiences = []string{src.Audience}
	}
	tr, err := tokens.ServiceAccountToken(ctx, pod.Namespace, sa, &authenticationv1.TokenRequest{
		Spec: authenticationv1.TokenRequestSpec{
			Audiences:         audiences,
			ExpirationSeconds: &exp,
			BoundObjectRef:    &authenticationv1.BoundObjectReference{APIVersion: "v1", Kind: "Pod", Name: pod.Name, UID: pod.UID},
		},
	})
	if err != nil {
		return nil, err
	}
	f := volumeFile{data: []byte(tr.Status.Token), mode: mode}
	if own := podOwnership(pod); own.fsGroup != nil || own.fsUser != nil {
		f.mode, f.owner = ownedTokenMode, own.fsUser
	}
	return map[string]volumeFile{path.Clean(src.Path): f}, nil
}

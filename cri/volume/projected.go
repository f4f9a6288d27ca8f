package volume

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"path"

	authenticationv1 "k8s.io/api/authentication/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/podlife/podlife/kubetypes"
)

// A projected volume (the kubelet's projected plugin) is one directory of
// files from several sources: a service account token bound to the pod,
// a ConfigMap's keys and the downward API's values. Every pod of a cluster
// with the ServiceAccount admission plugin has one, kube-api-access-*:
// the token, the kube-root-ca.crt ConfigMap's ca.crt and the namespace.
// Its files are collected at every sync and written atomically, so a
// refreshed token or a changed ConfigMap reaches a running container.

// TokenGetter requests a service account's token, bound to a pod, from
// the TokenRequest API and caches it until it must be refreshed (the
// kubelet's token manager, agent/token). It has the kubelet's
// GetServiceAccountToken signature.
type TokenGetter interface {
	ServiceAccountToken(ctx context.Context, namespace, name string, req *authenticationv1.TokenRequest) (*authenticationv1.TokenRequest, error)
}

// ConfigMapGetter reads a ConfigMap with the node's identity, which the
// Node authorizer lets read only what the node's pods reference (the
// kubelet's configmap manager, agent/configmap). A ConfigMap that does not
// exist is an error that apierrors.IsNotFound recognizes. The object
// returned may be shared: it is read, never changed.
type ConfigMapGetter interface {
	ConfigMap(ctx context.Context, namespace, name string) (*v1.ConfigMap, error)
}

// API is what the volumes read from the API server. In standalone mode
// both are nil, and the pods are static pods, which Check refuses to let
// reference API objects anyway.
type API struct {
	Tokens     TokenGetter
	ConfigMaps ConfigMapGetter
}

const (
	projectedPlugin = "kubernetes.io~projected"
	// defaultProjectedMode is the API's default defaultMode of a projected
	// volume: its files' mode, the token's included (the kubelet makes the
	// token 0600 only with fsGroup or runAsUser, not supported yet).
	defaultProjectedMode = 0o644
	// defaultTokenExpiration is the API's default expirationSeconds of a
	// serviceAccountToken source, minTokenExpiration its validation's
	// minimum.
	defaultTokenExpiration = 3600
	minTokenExpiration     = 600
)

// errNoAPI is a source that needs the API server on an agent without one.
var errNoAPI = errors.New("the agent has no API server to read it from (standalone mode)")

// sourceField is the field path of the j-th source of the i-th volume,
// as the API's validation names it.
func sourceField(i, j int) string {
	return fmt.Sprintf("spec.volumes[%d].projected.sources[%d]", i, j)
}

// checkProjected refuses the sources podlife cannot project (secret,
// clusterTrustBundle and podCertificate), API objects in a static pod
// (the kubelet refuses them: a static pod is not bound through the API,
// so the Node authorizer would refuse them too), and paths that leave the
// volume. i is the volume's index.
func checkProjected(pod *v1.Pod, i int, src *v1.ProjectedVolumeSource) error {
	if err := checkMode(src.DefaultMode); err != nil {
		return fmt.Errorf("spec.volumes[%d].projected.defaultMode: %w", i, err)
	}
	for j := range src.Sources {
		s := &src.Sources[j]
		field := sourceField(i, j)
		var paths []string
		switch {
		case s.Secret != nil:
			return fmt.Errorf("%s.secret: projected Secrets are not supported by podlife until Secrets are supported", field)
		case s.ClusterTrustBundle != nil:
			return fmt.Errorf("%s.clusterTrustBundle: projected cluster trust bundles are not supported by podlife", field)
		case s.PodCertificate != nil:
			return fmt.Errorf("%s.podCertificate: projected pod certificates are not supported by podlife", field)
		case s.ServiceAccountToken != nil:
			field += ".serviceAccountToken"
			if exp := s.ServiceAccountToken.ExpirationSeconds; exp != nil && *exp < minTokenExpiration {
				return fmt.Errorf("%s.expirationSeconds: %d is less than %d seconds", field, *exp, minTokenExpiration)
			}
			paths = []string{s.ServiceAccountToken.Path}
		case s.ConfigMap != nil:
			field += ".configMap"
			for k, item := range s.ConfigMap.Items {
				if err := checkMode(item.Mode); err != nil {
					return fmt.Errorf("%s.items[%d].mode: %w", field, k, err)
				}
				paths = append(paths, item.Path)
			}
		case s.DownwardAPI != nil:
			field += ".downwardAPI"
			for k, item := range s.DownwardAPI.Items {
				if err := checkMode(item.Mode); err != nil {
					return fmt.Errorf("%s.items[%d].mode: %w", field, k, err)
				}
				paths = append(paths, item.Path)
			}
		default:
			return fmt.Errorf("%s: no source type is set", field)
		}
		if (s.ServiceAccountToken != nil || s.ConfigMap != nil) && kubetypes.IsStatic(pod) {
			return fmt.Errorf("%s: a static pod may not reference API objects (service account tokens, ConfigMaps), as the kubelet refuses them", field)
		}
		for _, p := range paths {
			if !filePath(p) {
				return fmt.Errorf("%s: path %q must be a relative path without \"..\" and no element starting with \"..\"", field, p)
			}
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
	mode := int32(defaultProjectedMode)
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
		case s.ConfigMap != nil:
			field += ".configMap"
			part, err = configMapFiles(ctx, pod, s.ConfigMap, mode, api.ConfigMaps)
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
// is deleted.
func tokenFile(ctx context.Context, pod *v1.Pod, src *v1.ServiceAccountTokenProjection, mode int32, tokens TokenGetter) (map[string]volumeFile, error) {
	if tokens == nil {
		return nil, errNoAPI
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
	return map[string]volumeFile{path.Clean(src.Path): {data: []byte(tr.Status.Token), mode: mode}}, nil
}

// configMapFiles are the files of a configMap source, as the kubelet's
// configmap.MakePayload makes them: every key (data and binaryData) as a
// file of its name, or only the items, each at its path with its mode. A
// ConfigMap or an item's key that is not there is an error, unless the
// source is optional: then it adds nothing.
func configMapFiles(ctx context.Context, pod *v1.Pod, src *v1.ConfigMapProjection, mode int32, cms ConfigMapGetter) (map[string]volumeFile, error) {
	if cms == nil {
		return nil, errNoAPI
	}
	optional := src.Optional != nil && *src.Optional
	cm, err := cms.ConfigMap(ctx, pod.Namespace, src.Name)
	if err != nil {
		if optional && apierrors.IsNotFound(err) {
			return nil, nil
		}
		return nil, err
	}
	files := map[string]volumeFile{}
	if len(src.Items) == 0 {
		for k, v := range cm.Data {
			files[k] = volumeFile{data: []byte(v), mode: mode}
		}
		for k, v := range cm.BinaryData {
			files[k] = volumeFile{data: v, mode: mode}
		}
		for k := range files {
			if !filePath(k) {
				return nil, fmt.Errorf("configmap %q: key %q cannot be a file name", src.Name, k)
			}
		}
		return files, nil
	}
	for _, item := range src.Items {
		f := volumeFile{mode: mode}
		if item.Mode != nil {
			f.mode = *item.Mode
		}
		if s, ok := cm.Data[item.Key]; ok {
			f.data = []byte(s)
		} else if b, ok := cm.BinaryData[item.Key]; ok {
			f.data = b
		} else if optional {
			continue
		} else {
			return nil, fmt.Errorf("configmap %q has no key %q", src.Name, item.Key)
		}
		files[path.Clean(item.Path)] = f
	}
	return files, nil
}

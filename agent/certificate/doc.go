// Package certificate gives the node its TLS credentials as the kubelet
// gets them: its kubelet counterparts are pkg/kubelet/certificate/bootstrap
// (the client certificate bootstrap) and pkg/kubelet/certificate (the
// client and serving certificate managers and the rotating transport).
//
//   - Bootstrap (bootstrap.go): when --kubeconfig is missing or holds no
//     valid client certificate, request one with the bootstrap kubeconfig's
//     identity (a bootstrap token): a CSR for the signer
//     kubernetes.io/kube-apiserver-client-kubelet with the subject
//     O=system:nodes, CN=system:node:<node>, an ECDSA P-256 key; wait until
//     the controller manager approved and signed it; keep it in the cert
//     directory as client-go's file store does (kubelet-client-<time>.pem
//     and the kubelet-client-current.pem link, 0600) and write --kubeconfig
//     pointing at it.
//   - Client (client.go, transport.go): client-go's certificate manager
//     rotates the client certificate at 70–90% of its lifetime, with the
//     node's own identity; the API clients read the current certificate at
//     each TLS handshake, and every connection is closed after a rotation
//     so that none stays on the old one (the kubelet's updateTransport).
//   - Serving (serving.go): with --rotate-server-certificates, a manager
//     for the signer kubernetes.io/kubelet-serving with the node's
//     addresses as SANs; until an admin approved its first CSR (no
//     controller approves serving CSRs) its GetCertificate has none, and
//     the kubelet API serves its fallback (configured or self-signed).
//   - PrepareCertDir (certdir.go): the directory of keys, the agent's
//     own (0700), never reached through a symbolic link.
package certificate

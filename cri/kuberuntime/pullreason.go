package kuberuntime

import (
	"strings"

	"google.golang.org/grpc/status"
)

// maxReasonLength bounds a runtime error's gist in a log line.
const maxReasonLength = 160

// shortReason is the gist of a runtime error for one log line: the gRPC
// status message without the "rpc error: code = ... desc =" wrapping, cut
// to its last three ": "-separated parts (containerd nests every cause:
// failed to pull and unpack image ...: failed to resolve reference ...:
// the cause) and to maxReasonLength characters.
func shortReason(err error) string {
	msg := err.Error()
	if st, ok := status.FromError(err); ok {
		msg = st.Message()
	}
	if parts := strings.Split(msg, ": "); len(parts) > 3 {
		msg = strings.Join(parts[len(parts)-3:], ": ")
	}
	if r := []rune(msg); len(r) > maxReasonLength {
		msg = string(r[:maxReasonLength-3]) + "..."
	}
	return msg
}

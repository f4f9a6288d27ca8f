// Package manifests reads static pod manifests from a directory, the way a
// standalone kubelet's file source does, and reports what changed between
// two reads as Add, Update and Remove changes for the pod workers.
//
// Where this package departs from the kubelet, on purpose:
//
//   - A manifest that fails to read, parse or validate keeps the last good
//     version of that file running: the kubelet drops it, so a typo in a
//     manifest kills a running pod.
//   - The error for a bad file is reported once per content of the file, not
//     on every scan, so a poll loop does not flood the log.
//   - Only files ending in .yaml, .yml or .json are read, so editor backups
//     (pod.yaml~, pod.yaml.swp) are never taken for pods.
//   - config.seen is set by Source when a pod is first reported (as the
//     kubelet's config merge does), not by Decode, which has no clock.
//
// Changes come Removes first, then Updates, then Adds, each sorted by path,
// so a pod replaced under the same full name is killed before its successor
// is created. Of two files with one pod UID or full name, the later path is
// rejected, whatever runs already, so the outcome depends on the files only.
package manifests

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
//   - A pod's UID and full name are first come, first served: a file
//     claiming either while another file's pod has it waits, with an error
//     naming both files, until that file no longer has it. The kubelet
//     rejects whichever sorts later, so a copy that sorts first, as
//     web-copy.yaml does before web.yaml, replaced the running pod. Files
//     claiming a free name at once, as at the first scan, are served oldest
//     modification time first, then by path.
//   - A manifest over MaxManifestSize (10 MiB, the kubelet's cap for its
//     config sources) is refused without being read.
//   - Object meta is validated with the apiserver's rules (names, labels,
//     annotation size), a UID written in a manifest must be UUID-like (it
//     becomes part of paths), and periods must fit a time.Duration.
//
// Changes come Removes first, then Updates, then Adds, each sorted by path,
// so a pod replaced under the same full name is killed before its successor
// is created.
package manifests

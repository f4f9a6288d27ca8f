//go:build race

package container

func init() { raceDetector = true }

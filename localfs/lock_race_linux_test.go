//go:build race

package localfs_test

// The kill test's writers start slowly under the race detector too.
func init() {
	killRounds = 8
}

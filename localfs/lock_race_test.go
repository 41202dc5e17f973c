//go:build race

package localfs_test

// A race-detector binary's processes start slowly, so the stress tests run
// fewer rounds.
func init() {
	rmRaceRounds = 4
}

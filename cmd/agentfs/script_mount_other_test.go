//go:build !linux

package main

import "github.com/rogpeppe/go-internal/testscript"

// canMount is false: the scripts mount a tmpfs on Linux only.
func canMount() bool { return false }

func cmdMountTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("mounttmpfs mounts a tmpfs on Linux only; guard the script with [mount]")
}

func cmdMountBind(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("mountbind is Linux only; guard the script with [mount]")
}

func cmdMountOverlay(ts *testscript.TestScript, neg bool, args []string) {
	ts.Fatalf("mountoverlay is Linux only; guard the script with [mount]")
}

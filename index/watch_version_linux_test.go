package index

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"testing"
	"time"

	"github.com/agentfs/agentfs/fault"
)

// oldWatcher plays the watcher of an older agentfs on f's tree: it holds
// the tree's watch lock and answers every question as version 1 did
// (no proto, not OK), or as one of version 2 that names no format, as
// one started by --detach before an upgrade runs on for its --idle.
func oldWatcher(t *testing.T, f *fixture, proto int) {
	t.Helper()
	loc := f.location()
	unlock, err := lock(context.Background(), loc.watchLock, 0)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(unlock)
	fakeWatcher(t, loc.file, func(conn net.Conn) {
		var req map[string]any
		json.NewDecoder(conn).Decode(&req)
		r := map[string]any{"ok": false, "gen": req["gen"]}
		if proto != 0 {
			r["proto"] = proto
		}
		json.NewEncoder(conn).Encode(r)
	})
}

// oldFormat rewrites the magic of f's index as another version's, as the
// older watcher writes it again at each of its builds.
func oldFormat(t *testing.T, f *fixture) {
	t.Helper()
	file := f.location().file
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	copy(b[6:8], "03")
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A watcher of an older agentfs, still running after an upgrade, is
// named at once: index --watch and --detach waited out --lock-timeout
// (30 s) and were LOCK_TIMEOUT, "held its lock ... building its index or
// ending", and --status said only that the index was another version's,
// hinting to build it again, which the old watcher wrote over in its own
// format at once (so grep read every file for good, with no word why).
func TestWatcherOfAnotherVersionIsNamed(t *testing.T) {
	for _, tc := range []struct {
		format string
		proto  int
	}{{"this", 0}, {"another", 0}, {"another", watchProto}} {
		format := tc.format
		t.Run(fmt.Sprintf("%s%d", format, tc.proto), func(t *testing.T) {
			f := newFixture(t)
			f.seed()
			f.build()
			if format == "another" {
				oldFormat(t, f)
			}
			oldWatcher(t, f, tc.proto)
			began := time.Now()
			err := Watch(context.Background(), f.fsys, f.dir, f.dir, WatchOptions{BuildOptions: BuildOptions{LockTimeout: 3 * time.Second}})
			if fe := fault.AsError(err); fe == nil || fe.Code != fault.CodeExists || !errors.Is(err, ErrOtherVersionWatcher) || fe.Details["watcherPid"] != os.Getpid() {
				t.Errorf("a watcher where one of another version runs: %v, want EXISTS naming pid %d", err, os.Getpid())
			}
			if took := time.Since(began); took > 2*time.Second {
				t.Errorf("a watcher where one of another version runs took %v to say so", took)
			}
			if format == "this" && tc.proto == watchProto {
				return
			}
			_, err = Build(context.Background(), f.fsys, f.dir, f.dir, BuildOptions{LockTimeout: time.Second, Config: f.fsys.Fingerprint(), Roots: f.fsys.Roots()})
			if fe := fault.AsError(err); fe == nil || fe.Code != fault.CodeExists || !errors.Is(err, ErrOtherVersionWatcher) {
				t.Errorf("a build the watcher of another version would write over: %v, want EXISTS", err)
			}
			if format == "another" {
				var unusable UnusableError
				if _, err := StatusOf(f.dir, nil); !errors.As(err, &unusable) || unusable.WatcherPid != os.Getpid() {
					t.Errorf("status: %v, want the index unusable, naming the watcher %d that keeps it so", err, os.Getpid())
				}
			}
		})
	}
}

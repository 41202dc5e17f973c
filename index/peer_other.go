//go:build !linux && !darwin && !freebsd

package index

import "net"

// peerUID is false where agentfs does not read a Unix socket's peer
// credentials: no peer is trusted then, and a search proves freshness by
// its stat pass (no watcher runs there: Watch needs inotify).
func peerUID(net.Conn) (int, bool) { return 0, false }

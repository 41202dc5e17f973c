package localfs

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

// mountEntry is one line of /proc/self/mountinfo: the mount's number (new
// for each mount), the file system's device, the directory of that file
// system mounted (its root, "/" unless a bind mount of a subdirectory), and
// where it is mounted.
type mountEntry struct {
	id, dev, root, point string
}

// mountTable reads the mounts of this process's namespace, nil when they
// cannot be read (no /proc): keys then fall back to path names.
func mountTable() []mountEntry {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil
	}
	defer f.Close()
	var out []mountEntry
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 {
			continue
		}
		out = append(out, mountEntry{id: fields[0], dev: fields[2], root: unescapeMount(fields[3]), point: unescapeMount(fields[4])})
	}
	if sc.Err() != nil {
		return nil
	}
	return out
}

// MountsBelow names the mounts of this process's namespace on dir (a real
// absolute path) or below it, in the table's order; ok is false when the
// table cannot be read. A mount made or taken off there raises no inotify
// event: an index's watcher and a search compare theirs.
func MountsBelow(dir string) (names string, ok bool) {
	mounts := mountTable()
	if mounts == nil {
		return "", false
	}
	var b strings.Builder
	for _, m := range mounts {
		if _, in := within(dir, m.point); in {
			fmt.Fprintf(&b, "%s %s %q %q\n", m.id, m.dev, m.root, m.point)
		}
	}
	return b.String(), true
}

// unescapeMount undoes mountinfo's octal escapes of space, tab, newline and
// backslash (\040).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) && isOctal(s[i+1]) && isOctal(s[i+2]) && isOctal(s[i+3]) {
			b.WriteByte((s[i+1]-'0')<<6 | (s[i+2]-'0')<<3 | (s[i+3] - '0'))
			i += 3
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func isOctal(c byte) bool { return c >= '0' && c <= '7' }

// lockKeyParts are the file system (its device, "" when no mount is
// known) and the path within it of the real absolute path p, which name
// its lock (see lockKey). The last mount on the longest mount point
// holding p is the one p reaches.
func lockKeyParts(mounts []mountEntry, p string) (dev, fsPath string) {
	best := -1
	for i, m := range mounts {
		if _, ok := within(m.point, p); ok && (best < 0 || len(m.point) >= len(mounts[best].point)) {
			best = i
		}
	}
	if best < 0 {
		return "", p
	}
	m := mounts[best]
	rel, _ := within(m.point, p)
	return m.dev, filepath.Join(m.root, rel)
}

// mountPoints are the directories a file system is mounted on, with the
// device (major:minor) of the last one mounted there, nil when the mounts
// cannot be read.
func mountPoints() map[string]string {
	mounts := mountTable()
	if mounts == nil {
		return nil
	}
	points := make(map[string]string, len(mounts))
	for _, m := range mounts {
		points[m.point] = m.dev
	}
	return points
}

// devName is the device number dev as mountinfo writes it, major:minor.
func devName(dev uint64) string {
	return fmt.Sprintf("%d:%d", unix.Major(dev), unix.Minor(dev))
}

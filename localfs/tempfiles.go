package localfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentfs/agentfs/fault"
	"golang.org/x/sys/unix"
)

// A temporary file of a replace is agentfs's own only when agentfs can
// prove it: before creating one, a writer creates a record of it in the
// state directory and holds an exclusive flock on the record until the temp
// file is renamed or removed; the record names the temp file's real path,
// then its device and inode. A sweep removes a temp file only when its
// record exists, is not locked (its writer is gone: the kernel freed the
// flock) and names that very file. A user's file that merely has a temp
// file's name has no record and is never touched, whatever its age; a live
// writer's file is locked. Sweeps run after a write, in its directory, and
// at each start over every record (sweepRecords), so that a writer killed
// in a directory nobody writes to again leaves nothing behind either.

// tempRecord is a writer's proof of ownership of one temporary file.
type tempRecord struct {
	fd   int
	path string
}

// tempRecordPath is where the record of the temp file at the real absolute
// path p lives, keyed as a lock is (one key through a bind mount too).
func tempRecordPath(mounts []mountEntry, p string) (string, error) {
	return recordPath(tempRecords, mounts, p)
}

// The records of temp files, and those of the directories a transaction
// made (see madeDirs), each in their own directory of the state
// directory: a sweep removes the files before the directories.
const (
	tempRecords = "temps"
	dirRecords  = "dirs"
)

// recordPath is where the record of the real absolute path p lives in the
// records directory kind of the state directory.
func recordPath(kind string, mounts []mountEntry, p string) (string, error) {
	base, err := stateDir()
	if err != nil {
		return "", err
	}
	d := filepath.Join(base, kind)
	if err := os.MkdirAll(d, 0o700); err != nil {
		return "", err
	}
	return filepath.Join(d, lockName(lockKey(mounts, p))), nil
}

// newTempRecord creates and locks the record of the temp file that is about
// to be created at the real absolute path p.
func newTempRecord(p string) (*tempRecord, error) {
	rp, err := tempRecordPath(mountTable(), p)
	if err != nil {
		return nil, err
	}
	return newRecord(rp, p)
}

// newDirRecord creates and locks the record of the directory that is about
// to be made at the real absolute path p: a record of its own, as another
// commit may try to make the same directory at the same time. The
// directory is made first under a temporary name, which is the record's
// (stagingDirName).
func newDirRecord(p string) (*tempRecord, error) {
	rp, err := recordPath(dirRecords, mountTable(), p)
	if err != nil {
		return nil, err
	}
	return newRecord(rp+"-"+strings.TrimPrefix(tempName(), tempPrefix), p)
}

// stagingDirName is the temporary name, beside its directory, under which
// the directory of the record at rp is made before it is renamed to its
// own: the record's random digits, which no other writer's record has.
func stagingDirName(rp string) string {
	return tempPrefix + rp[strings.LastIndexByte(rp, '-')+1:]
}

// newRecord creates and locks the record at rp of the real absolute path
// p.
func newRecord(rp, p string) (*tempRecord, error) {
	fd, err := createLocked(rp, []byte(p+"\n"))
	if err != nil {
		return nil, err
	}
	return &tempRecord{fd: fd, path: rp}, nil
}

// createLocked makes the file at path with data in it, flocked by the
// returned descriptor before it appears at path: it is written under a
// fresh name and renamed, so that a sweep or a recovery, which takes the
// file's flock to learn that its writer is dead, can never take it first.
func createLocked(path string, data []byte) (int, error) {
	tmp := path + partialSuffix + strings.TrimPrefix(tempName(), tempPrefix)
	fd, err := unix.Open(tmp, unix.O_RDWR|unix.O_CREAT|unix.O_EXCL|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0o600)
	if err != nil {
		return -1, err
	}
	err = unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB)
	if err == nil {
		err = writeFull(fd, data)
	}
	if err == nil {
		err = unix.Rename(tmp, path)
	}
	if err != nil {
		unix.Unlink(tmp)
		unix.Close(fd)
		return -1, err
	}
	return fd, nil
}

// partialSuffix marks a state file not yet in place (see createLocked),
// which sweeps and recoveries pass over.
const partialSuffix = ".partial-"

// bind writes the identity of the created temp file into the record.
func (r *tempRecord) bind(tempFd int) error {
	var st unix.Stat_t
	if err := unix.Fstat(tempFd, &st); err != nil {
		return err
	}
	return r.bindIdentity(&st)
}

// bindIdentity writes the identity st into the record.
func (r *tempRecord) bindIdentity(st *unix.Stat_t) error {
	return writeFull(r.fd, []byte(identity(st)))
}

// writeFull writes all of b at fd. A write that stops short (a disk
// filling up, a file size limit) is gone on with until the error that
// stopped it: a state file cut short and taken as whole is a journal
// that cannot undo its commit.
func writeFull(fd int, b []byte) error {
	for len(b) > 0 {
		n, err := unix.Write(fd, b)
		if err != nil {
			return err
		}
		if n == 0 {
			return io.ErrShortWrite
		}
		b = b[n:]
	}
	return nil
}

// recordText splits a record into the temp file's real path and its
// identity ("" when its writer died before recording it), at the last
// line ending: a path may hold one, an identity never does.
func recordText(b []byte) (path, id string, ok bool) {
	i := strings.LastIndexByte(string(b), '\n')
	if i < 0 {
		return "", "", false
	}
	path, id = string(b[:i]), string(b[i+1:])
	return path, id, filepath.IsAbs(path)
}

// done removes the record once its temp file is renamed or removed.
func (r *tempRecord) done() {
	unix.Unlink(r.path) // housekeeping: a leftover unlocked record proves nothing by itself
	unix.Close(r.fd)
}

func identity(st *unix.Stat_t) string {
	return strconv.FormatUint(uint64(st.Dev), 10) + ":" + strconv.FormatUint(st.Ino, 10)
}

// fsID is the identity of a file system as statfs (called with the
// Statfs_t to fill) gives it, f_fsid, "" where it gives none (tmpfs):
// unlike a device number, which is handed out at mount time, it comes
// from the file system itself (ext4's and btrfs's UUID).
func fsID(statfs func(*unix.Statfs_t) error) string {
	var s unix.Statfs_t
	if statfs(&s) != nil || s.Fsid.Val == [2]int32{} {
		return ""
	}
	return strconv.FormatUint(uint64(uint32(s.Fsid.Val[0])), 16) + ":" + strconv.FormatUint(uint64(uint32(s.Fsid.Val[1])), 16)
}

// stamp is a file's size and modification time, which a write in place
// changes where identity stays.
func stamp(st *unix.Stat_t) string {
	return strconv.FormatInt(st.Size, 10) + ":" + strconv.FormatInt(st.Mtim.Nano(), 10)
}

// sweep removes the temporary files of dead writers from dir, whose real
// absolute path is dirReal. It is housekeeping after a successful write: a
// file it cannot prove is agentfs's, read or remove is left alone, and no
// error of it fails the write.
func sweep(dir *os.File, dirReal string) {
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return
	}
	var mounts []mountEntry
	for _, n := range names {
		if !isTempName(n) {
			continue
		}
		if mounts == nil {
			mounts = mountTable()
		}
		sweepOne(int(dir.Fd()), n, filepath.Join(dirReal, n), mounts)
	}
}

func sweepOne(dfd int, name, real string, mounts []mountEntry) (held bool) {
	rp, err := tempRecordPath(mounts, real)
	if err != nil {
		return false
	}
	return sweepRecord(rp, dfd)
}

// sweepRecord removes the temp file of the record at rp when its writer is
// dead and the file there is the one it names. dfd is the directory of the
// record's path, or -1 to open it here (without following a final link).
// held says the file may still be there as a writer's, for a later sweep:
// its writer lives, or it could not be removed.
func sweepRecord(rp string, dfd int) (held bool) {
	fd, err := unix.Open(rp, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false // no record: not agentfs's file
	}
	defer unix.Close(fd)
	if !trustedRecord(fd, rp) {
		return false
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return true // its writer is alive
	}
	buf := make([]byte, 4200)
	n, _ := unix.Pread(fd, buf, 0)
	path, id, ok := recordText(buf[:max(n, 0)])
	if !ok {
		return false
	}
	if dfd < 0 {
		dfd, err = unix.Open(filepath.Dir(path), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.ENOENT) {
			unix.Unlink(rp) // its directory is gone, and the file with it
			return false
		}
		if err != nil {
			return true
		}
		defer unix.Close(dfd)
	}
	name := filepath.Base(path)
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		if errors.Is(err, unix.ENOENT) {
			unix.Unlink(rp) // renamed or removed since: nothing to sweep
		}
		return false
	}
	// An empty identity is a writer killed between creating the file and
	// recording it: the name is random and was created with O_EXCL after
	// the record, so the file there is that writer's.
	if id != "" && id != identity(&st) {
		return false // another file now has the name
	}
	if unix.Unlinkat(dfd, name, 0) != nil {
		return true
	}
	unix.Unlink(rp)
	return false
}

// trustedRecord reports whether the record open at fd, at rp, is one this
// user wrote: a regular file of this user's, in a records directory of
// this user's that nobody else can write. Another user could plant one
// while the state directory was not private (chmod 700 since, as the
// refusal's hint says): trusted, a record naming any file without an
// identity had the next start remove that file, outside the roots too.
// Such a record is left where it is, as a foreign journal is.
func trustedRecord(fd int, rp string) bool {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil || int(st.Uid) != os.Getuid() || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return false
	}
	return checkPrivate(filepath.Dir(rp)) == nil
}

// recordDirNames are the directories of a state directory that
// sweepRecords lists.
var recordDirNames = [...]string{tempRecords, dirRecords, "journal"}

// sweptDirs is the stamps of a state directory's record directories
// (recordDirNames; zero for one missing), taken before a sweep that found
// them empty, and proving a later change (dirStamp.proves).
type sweptDirs struct {
	base string
	dirs [len(recordDirNames)]dirStamp
}

// sweepChanged sweeps the state directory base (sweepRecords) unless its
// record directories are as the last sweep that found them empty saw
// them: a session's request then pays three stats, not a dozen calls.
func (f *FS) sweepChanged(base string) {
	if base == "" {
		return
	}
	now := f.listings.clock() // the clock of the stamps' proofs, a test's too
	seen := sweptDirs{base: base}
	for i, n := range recordDirNames {
		var st unix.Stat_t
		if unix.Stat(filepath.Join(base, n), &st) == nil {
			seen.dirs[i] = stampOf(&st)
		}
	}
	if last := f.swept.Load(); last != nil && *last == seen {
		return
	}
	f.swept.Store(nil)
	if !sweepRecords(base) || !stampsProve(base, seen.dirs[:], now) {
		return
	}
	f.swept.Store(&seen)
}

// stampsProve reports whether every stamp, of the directories of base,
// proves a later change, on a file system whose times this machine sets.
func stampsProve(base string, stamps []dirStamp, now time.Time) bool {
	for _, s := range stamps {
		if !s.proves(now) {
			return false
		}
	}
	fd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	return localTimes(fd)
}

// sweepRecords sweeps the temp files of every dead writer's record in the
// state directory base ("" when there is none), then the directories its
// transaction made, and the state files a writer killed in createLocked
// left half made: the housekeeping of a start, after the journals are
// recovered. One process sweeps at a time, under the flock of base, and
// another skips its sweep: beside one still removing a writer's temp
// files or deeper directories, a second found a directory not yet empty
// and dropped its record, the directory left for good. empty says it
// swept, and found none of the three directories holding anything.
func sweepRecords(base string) (empty bool) {
	if base == "" {
		return false
	}
	bfd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(bfd)
	if unix.Flock(bfd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false // another process sweeps
	}
	d := filepath.Join(base, tempRecords)
	names, _ := os.ReadDir(d)
	found := len(names)
	for _, n := range names {
		if p := filepath.Join(d, n.Name()); strings.Contains(n.Name(), partialSuffix) {
			sweepPartial(p)
		} else {
			sweepRecord(p, -1)
		}
	}
	found += sweepDirRecords(filepath.Join(base, dirRecords), "")
	journals, _ := os.ReadDir(filepath.Join(base, "journal"))
	found += len(journals)
	for _, n := range journals {
		p := filepath.Join(base, "journal", n.Name())
		switch {
		case strings.Contains(n.Name(), partialSuffix):
			sweepPartial(p)
		case strings.HasSuffix(n.Name(), journalRecovering):
			sweepRecoveryFile(p)
		case strings.HasSuffix(n.Name(), journalAbandoned):
			// A committer's note of why it gave its journal up, left by
			// a recovery killed between the two unlinks.
			if _, err := os.Lstat(strings.TrimSuffix(p, journalAbandoned)); errors.Is(err, fs.ErrNotExist) {
				unix.Unlink(p)
			}
		}
	}
	return found == 0
}

// sweepBelow sweeps, as sweepRecords does, the records of dead writers
// whose temp files and made directories lie below the real absolute path
// dir, which a move is about to rename. A record names its file by path:
// once the directory moved, a sweep found that path gone and dropped the
// record, and the file stayed for good at its new place (a crash stress
// killed an edit in mvt/x/sub, then moved mvt/x to mvt/y). The caller
// holds dir's lock, so the writers below it are dead or wait. A sweep under
// way is waited for (until deadline), as one that read a record before the
// rename and looked for its directory after it dropped the record all the
// same; it is housekeeping, and the move goes on whatever it did.
func sweepBelow(ctx context.Context, dir string, deadline time.Time) {
	base := existingStateDir()
	if base == "" {
		return
	}
	bfd, err := unix.Open(base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	defer unix.Close(bfd)
	if FlockWait(ctx, bfd, unix.LOCK_EX, deadline) != nil {
		return
	}
	d := filepath.Join(base, tempRecords)
	names, _ := os.ReadDir(d)
	for _, n := range names {
		p := filepath.Join(d, n.Name())
		if b, err := os.ReadFile(p); err == nil && !strings.Contains(n.Name(), partialSuffix) && recordBelow(b, dir) {
			sweepRecord(p, -1)
		}
	}
	sweepDirRecords(filepath.Join(base, dirRecords), dir)
}

// recordBelow reports whether the record b names a path strictly below the
// real absolute path dir; every record does for dir "".
func recordBelow(b []byte, dir string) bool {
	path, _, ok := recordText(b)
	if !ok {
		return false
	}
	if dir == "" {
		return true
	}
	rel, inside := within(dir, path)
	return inside && rel != "."
}

// sweepRecoveryFile removes the recovery file at p that a process killed
// during a recovery left, once no process holds it and its journal is
// gone.
func sweepRecoveryFile(p string) {
	if _, err := os.Lstat(strings.TrimSuffix(p, journalRecovering)); !errors.Is(err, fs.ErrNotExist) {
		return
	}
	if fd, err := lockRecoveryFile(p); err == nil {
		unix.Unlink(p)
		unix.Close(fd)
	}
}

// sweepDirRecords removes, deepest first, the directories that dead
// writers' transactions made (records in d) while still empty: a writer
// killed before its journal named them (see madeDirs); those strictly
// below the real absolute path below alone, unless it is "". It returns
// how many entries d held.
func sweepDirRecords(d, below string) int {
	names, _ := syscalls.readDir(d)
	type record struct{ rp, path string }
	var records []record
	for _, n := range names {
		rp := filepath.Join(d, n.Name())
		if strings.Contains(n.Name(), partialSuffix) {
			sweepPartial(rp)
			continue
		}
		b, err := os.ReadFile(rp)
		if path, _, _ := recordText(b); err == nil && recordBelow(b, below) {
			records = append(records, record{rp, path})
		}
	}
	slices.SortFunc(records, func(a, b record) int {
		return strings.Count(b.path, "/") - strings.Count(a.path, "/")
	})
	for _, r := range records {
		sweepDirRecord(r.rp)
	}
	return len(names)
}

// sweepDirRecord removes the directory of the record at rp when its writer
// is dead, the directory there is the one it names (at its name, or still
// at its staging name), and it is empty once the temp files of dead
// writers in it are swept. The record stays while its writer lives, or
// while the directory holds only what a later sweep may remove
// (sweepMadeDir): a sweep that passed over the temp files of a writer
// then alive, and killed since, dropped it and left the directory for
// good. A record without an identity is a writer killed between the mkdir
// and recording it: the directory is at its staging name, which that
// writer alone made (mkdir fails on a name that exists), and nobody else
// knows. Where the directory was made at its own name (madeDirs.mkdir's
// fallback), such a record proves nothing and the directory stays.
func sweepDirRecord(rp string) {
	fd, err := unix.Open(rp, unix.O_RDWR|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	if !trustedRecord(fd, rp) {
		return
	}
	if unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) != nil {
		return // its writer is alive
	}
	buf := make([]byte, 4200)
	n, _ := unix.Pread(fd, buf, 0)
	held := false
	if path, id, ok := recordText(buf[:max(n, 0)]); ok {
		staging := stagingDirName(rp)
		atDir(filepath.Dir(path), func(dfd int) {
			if id == "" {
				unix.Unlinkat(dfd, staging, unix.AT_REMOVEDIR)
				return
			}
			held = sweepMadeDir(dfd, filepath.Base(path), path, id, filepath.Dir(rp)) ||
				sweepMadeDir(dfd, staging, filepath.Join(filepath.Dir(path), staging), id, filepath.Dir(rp))
		})
	}
	if !held {
		unix.Unlink(rp)
	}
}

// sweepMadeDir removes the directory name in dfd, whose real absolute
// path is real, when it is still the one with identity id, and empty once
// the temp files of dead writers in it are swept. It says whether the
// directory stays holding nothing but what a later sweep may remove: a
// live writer's temp file, or a directory with a record in records (the
// directory of the records of made directories) still; the deeper ones
// are swept first, so such a record was kept, or made since the listing.
// One that holds anything else (a user's file, a directory nobody
// records) is someone's, and stays for good, its record gone.
func sweepMadeDir(dfd int, name, real, id, records string) bool {
	var st unix.Stat_t
	if unix.Fstatat(dfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR || identity(&st) != id {
		return false // gone, or not the one made
	}
	if !errors.Is(syscalls.rmdirat(dfd, name), unix.ENOTEMPTY) {
		return false // removed, or not to be
	}
	fd, err := unix.Openat(dfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	dir := os.NewFile(uintptr(fd), real)
	defer dir.Close()
	names, err := dir.Readdirnames(-1)
	if err != nil {
		return false
	}
	mounts := mountTable()
	recs, _ := os.ReadDir(records)
	held := false
	for _, n := range names {
		p := filepath.Join(real, n)
		switch {
		case dirRecorded(recs, mounts, p):
			held = true
		case !isTempName(n):
			return false
		case sweepOne(fd, n, p, mounts):
			held = true
		case unix.Fstatat(fd, n, &st, unix.AT_SYMLINK_NOFOLLOW) == nil:
			return false // not a writer's
		}
	}
	// Emptied, it may have been filled again since: the next sweep looks.
	return held || errors.Is(syscalls.rmdirat(dfd, name), unix.ENOTEMPTY)
}

// dirRecorded reports whether recs (the records of made directories)
// hold one of the directory at the real absolute path p, by its name or,
// for a staging name, by the record's digits: one a sweep kept, or one
// made since it listed them.
func dirRecorded(recs []os.DirEntry, mounts []mountEntry, p string) bool {
	prefix := lockName(lockKey(mounts, p)) + "-"
	digits, staging := strings.CutPrefix(filepath.Base(p), tempPrefix)
	for _, e := range recs {
		n := e.Name()
		if !strings.Contains(n, partialSuffix) && (strings.HasPrefix(n, prefix) || staging && strings.HasSuffix(n, "-"+digits)) {
			return true
		}
	}
	return false
}

// partialAge is how old a half-made state file is before a sweep takes it
// for a dead writer's: its writer flocks it just after creating it, and a
// sweep that took the flock in between would fail that writer's call.
const partialAge = time.Minute

// sweepPartial removes the half-made state file p when its writer is
// dead (its flock free) and it is older than partialAge. Nothing reads
// it; it is litter.
func sweepPartial(p string) {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if unix.Fstat(fd, &st) == nil && time.Since(time.Unix(st.Mtim.Unix())) > partialAge &&
		unix.Flock(fd, unix.LOCK_EX|unix.LOCK_NB) == nil {
		unix.Unlink(p)
	}
}

// reservedName refuses a path whose last name is one that agentfs makes for
// its temporary files: a user's file there would be hidden from find and
// grep and taken for a dead writer's leftover.
func reservedName(base, display string) error {
	if !isTempName(base) {
		return nil
	}
	return fault.InvalidArgument("the name %s is reserved for agentfs's temporary files.", base).WithPath(display).
		WithHint("choose another name; names starting with %s and 16 hex digits are agentfs's", tempPrefix)
}

// tempName is a fresh name for a temporary file.
func tempName() string {
	return fmt.Sprintf("%s%016x", tempPrefix, rand.Uint64())
}

// isTempName reports a name tempName makes: the prefix and exactly 16 hex
// digits.
func isTempName(n string) bool {
	digits, ok := strings.CutPrefix(n, tempPrefix)
	if !ok || len(digits) != 16 {
		return false
	}
	for _, c := range digits {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

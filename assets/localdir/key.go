package localdir

import (
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"syscall"

	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/localfs"
)

// keyName is the signing key's file in the state directory.
const keyName = localfs.SigningKeyName

const keySize = 32

// LoadKey returns the signing key kept in stateDir, making it on first use
// (mode 0600: whoever reads it can make links). Two processes making it at
// once agree on one: each writes its own and links it into place, and the
// loser reads the winner's.
func LoadKey(stateDir string) ([]byte, error) {
	p := filepath.Join(stateDir, keyName)
	key, err := readKey(p)
	if !errors.Is(err, os.ErrNotExist) {
		return key, err
	}
	key = make([]byte, keySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	f, err := os.CreateTemp(stateDir, tempPrefix+"key-*")
	if err != nil {
		return nil, keyError(err, p)
	}
	defer os.Remove(f.Name())
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, keyError(err, p)
	}
	// CreateTemp makes the file 0600; a link never replaces a key in use.
	if err := os.Link(f.Name(), p); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, keyError(err, p)
	}
	return readKey(p)
}

// KeyReader reads the signing key kept in stateDir at each call, never
// making one: a server's, which then follows a key removed or made again.
func KeyReader(stateDir string) func() ([]byte, error) {
	p := filepath.Join(stateDir, keyName)
	return func() ([]byte, error) { return readKey(p) }
}

// readKey reads the key at p and refuses one that others could read or
// that is not a key.
func readKey(p string) ([]byte, error) {
	fi, err := os.Lstat(p)
	if errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err != nil {
		return nil, keyError(err, p)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		// Planted while the state directory was not private (chmod 700
		// since): its owner knows it, and could sign any link.
		return nil, fault.Errorf(fault.CodeNotConfigured, "the signing key belongs to user %d, who could sign links with it.", st.Uid).WithPath(p).
			WithHint("remove it to make a new one of this user's (links made with it stop working)")
	}
	if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o077 != 0 || fi.Size() != keySize {
		return nil, fault.Errorf(fault.CodeNotConfigured, "the signing key is not a private %d-byte file.", keySize).WithPath(p).
			WithHint("remove it to make a new one (links made with it stop working), or chmod 600 it")
	}
	key, err := os.ReadFile(p)
	if err != nil {
		return nil, keyError(err, p)
	}
	return key, nil
}

// keyError is the error of the key at p, coded as any file of the state
// directory's (a full one is NO_SPACE).
func keyError(err error, p string) error {
	code, hint := localfs.StateDirFault(err)
	return fault.Errorf(code, "the signing key cannot be read or made: %s.", localfs.ErrText(err)).WithPath(p).
		WithHint("%s", hint).WithCause(err)
}

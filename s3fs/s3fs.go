// Package s3fs is the backend of a workspace in an S3-compatible object
// store, s3://bucket/prefix. Files are objects below the prefix and
// directories are the prefixes between them: a directory exists while a key
// lies below it, or while its marker object (its key with a final /)
// does, which Remove leaves when it empties a directory, as rm leaves the
// parent of a file on a disk. Versions are ETags; every change is one
// request the store makes atomic, a compare-and-swap by If-Match (STALE on
// 412) or If-None-Match: * (EXISTS). A store has no links, modes, in-place
// rewrites nor locks, and this backend claims none; it makes transactions
// with a journal object (see Commit), and renames with them (see
// move.go). Requests go through package s3client.
package s3fs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"net"
	"net/http"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/agentfs/agentfs/backend"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

// Scheme starts a root in an object store.
const Scheme = "s3://"

// Config says where the workspace is and how to reach the store.
type Config struct {
	// Root is s3://bucket or s3://bucket/prefix.
	Root string
	// Endpoint is the store's URL (http://host:port); empty is AWS S3.
	// An endpoint is addressed path-style, AWS by virtual host.
	Endpoint string
	// EndpointSetting names the setting that gave Endpoint
	// (AWS_ENDPOINT_URL...), for the hints; empty names them all.
	EndpointSetting string
	// Region defaults to us-east-1.
	Region string
	// AccessKey and SecretKey, when set, are the credentials; else they
	// come from the AWS_* variables, then the shared credentials file's
	// profile (AWS_PROFILE, else default).
	AccessKey, SecretKey string
	// Transport, when set, carries every request (a test counts them).
	Transport http.RoundTripper
	// IdleTimeout is how long a request waits with no byte moving before
	// it fails IO_ERROR; 0 is s3client.DefaultIdleTimeout.
	IdleTimeout time.Duration
	// Deny are paths of the workspace refused with everything below them,
	// relative to the prefix or spelled s3://bucket/prefix/...; one at or
	// above the root denies the whole workspace; one outside it (a local
	// path, another bucket or prefix) denies nothing, as nothing there is
	// reached.
	Deny []string
}

// FS is a workspace below a prefix of a bucket. It is safe for concurrent
// use.
type FS struct {
	c *s3client.Client
	// prefix is the workspace's own key prefix: "" or ending in /.
	prefix string
	// root is the workspace as the caller named it, s3://bucket/prefix.
	root string
	// endpoint names the setting of the store's endpoint in hints.
	endpoint string
	// lease is how long the journal of a transaction lives unrenewed (see
	// lease.go).
	lease time.Duration
	// deny are the denied paths, cleaned.
	deny []string
	// paused, set by tests, runs between a move's lease check and the copy
	// or deletion it lets through: where a process paused past its lease
	// (SIGSTOP, a frozen VM) sends its request after a recovery.
	paused func(phase, key string)
	// marks and ended (the marks of transactions ended) tell which
	// versions a transaction in flight wrote, and committed which ended
	// transactions were committed (see pending.go).
	marks     versionMarks
	ended     sync.Map
	committed sync.Map
}

var (
	_ backend.MutableFS = (*FS)(nil)
	_ backend.Walker    = (*FS)(nil)
)

// ParseRoot splits s3://bucket/prefix into the bucket and the prefix ("" or
// ending in /).
func ParseRoot(root string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(root, Scheme)
	bucket, key, _ := strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return "", "", fault.InvalidArgument("%q is not an object-store root.", root).
			WithHint("name it s3://bucket or s3://bucket/prefix")
	}
	if key = strings.Trim(path.Clean("/"+key), "/"); key != "" {
		prefix = key + "/"
	}
	return bucket, prefix, nil
}

// New connects to the store of cfg.Root. It makes no request: a missing
// bucket or refused credentials show at the first call.
func New(cfg Config) (*FS, error) {
	bucket, prefix, err := ParseRoot(cfg.Root)
	if err != nil {
		return nil, err
	}
	transport := cfg.Transport
	if transport == nil {
		t := s3client.NewTransport(cfg.IdleTimeout)
		t.MaxIdleConnsPerHost = readsInFlight // a search's GETs reuse their connections
		transport = t
	}
	c, err := s3client.New(s3client.Config{Endpoint: cfg.Endpoint, Region: cfg.Region, Bucket: bucket,
		Credentials: s3client.Credentials{AccessKey: cfg.AccessKey, SecretKey: cfg.SecretKey}, Transport: transport,
		IdleTimeout: cfg.IdleTimeout})
	endpoint := endpointSetting(cfg)
	if errors.Is(err, s3client.ErrNoCredentials) {
		return nil, fault.Errorf(fault.CodeNotConfigured, "no credentials for the object store: %v.", err).
			WithHint("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE with a shared credentials file")
	}
	if err != nil {
		return nil, fault.InvalidArgument("the endpoint %q is not a URL.", cfg.Endpoint).
			WithHint("set %s to http://host:port or https://host", endpoint)
	}
	f := &FS{c: c, prefix: prefix, root: strings.TrimSuffix(Scheme+bucket+"/"+prefix, "/"), endpoint: endpoint, lease: defaultLease}
	for _, d := range cfg.Deny {
		if c, ok := denyPath(bucket, prefix, d); ok {
			f.deny = append(f.deny, c)
		}
	}
	return f, nil
}

// denyPath is the workspace-relative path that the deny path d denies in
// the workspace at prefix of bucket: "." for one at or above the root
// (the bucket, a prefix holding the root's, .. up from it), as a local
// deny above a root denies all of it; ok is false for one naming nothing
// of the workspace (a local path, another bucket or prefix), which no
// path of it reaches. d's key is cleaned as a root's is (s3://b//p/x,
// s3://b/x/../p/x): the cleaning of the workspace's paths (clean) refused
// those, and a deny above the root, as outside, and they were dropped,
// every key they named left readable.
func denyPath(bucket, prefix, d string) (string, bool) {
	var key string
	switch {
	case strings.HasPrefix(d, Scheme):
		b, k, _ := strings.Cut(d[len(Scheme):], "/")
		if b != bucket {
			return "", false
		}
		key = path.Clean("/" + k)
	case path.IsAbs(d) || strings.IndexByte(d, 0) >= 0:
		return "", false
	default:
		key = path.Join("/"+prefix, d)
	}
	root := "/" + strings.TrimSuffix(prefix, "/")
	switch {
	case key == root || key == "/" || strings.HasPrefix(root, key+"/"):
		return ".", true
	case root == "/":
		return key[1:], true
	case strings.HasPrefix(key, root+"/"):
		return key[len(root)+1:], true
	}
	return "", false
}

// endpointSetting names the setting of cfg's endpoint: its own, else
// every one that can give it.
func endpointSetting(cfg Config) string {
	return cmp.Or(cfg.EndpointSetting, "--s3-endpoint, AWS_ENDPOINT_URL_S3 or AWS_ENDPOINT_URL")
}

// clean turns a caller's path into the workspace-relative path ("." for
// the root). A path spelled s3://bucket/prefix/... is taken when it lies
// in the workspace; an absolute one or one that climbs out with .. is
// OUTSIDE_ROOT, since keys outside the prefix are not the workspace's.
func (f *FS) clean(p string) (string, error) {
	if p == "" {
		return "", fault.InvalidArgument("path is empty.").WithHint("pass a path relative to the workspace")
	}
	if strings.IndexByte(p, 0) >= 0 {
		// As on a disk, before the store is asked: versitygw answers such
		// a key 500, which was retried, then IO_ERROR saying to retry.
		return "", fault.InvalidArgument("the path contains a NUL byte.").
			WithHint("remove the NUL byte; no file name can hold one")
	}
	rel := p
	if strings.HasPrefix(p, Scheme) {
		var ok bool
		if rel, ok = strings.CutPrefix(p, f.root); !ok || rel != "" && rel[0] != '/' {
			return "", f.outside(p)
		}
		rel = "." + rel
	}
	c := path.Clean(rel)
	if path.IsAbs(c) {
		return "", f.outside(p)
	}
	if c == ".." || strings.HasPrefix(c, "../") {
		// Up from the root, .. is resolved by the names, from the
		// prefix's own: ../p/a.txt in the workspace s3://bucket/p is
		// a.txt, as on a disk.
		base := "/" + strings.TrimSuffix(f.prefix, "/") + "/"
		rest, ok := strings.CutPrefix(path.Join(base, c)+"/", base)
		if f.prefix == "" || !ok {
			return "", f.outside(p)
		}
		c = path.Clean("./" + rest)
	}
	if f.denied(c) {
		return "", fault.Errorf(fault.CodeDenied, "the path is inside a denied location.").WithPath(c).
			WithHint("this location is refused by --deny; work elsewhere")
	}
	if inJournal(c) {
		// A journal written there by hand would be acted on by recovery,
		// this workspace's or, below, that of a workspace in a folder.
		return "", fault.Errorf(fault.CodeDenied, "the path is inside %s, where agentfs keeps its transactions' journals.", journalDir).WithPath(c).
			WithHint("work elsewhere in the workspace")
	}
	return c, nil
}

// place is clean of a path a call acts on, which also refuses a ".."
// after a name that is not a directory (backend.CheckDotDot): one listing
// for each "..".
func (f *FS) place(ctx context.Context, p string) (string, error) {
	c, err := f.clean(p)
	if err != nil {
		return "", err
	}
	return c, backend.CheckDotDot(p, func(prefix string) (bool, error) {
		c, err := f.clean(prefix)
		if err != nil {
			return false, nil
		}
		return f.isDir(ctx, c)
	})
}

// inJournal reports a path in a journal folder: this workspace's, or, in
// a folder, a workspace's there.
func inJournal(c string) bool {
	return slices.Contains(strings.Split(c, "/"), journalDir)
}

// journalBelow is the DENIED of a tree whose keys (below dirKey) hold a
// journal folder: a move would carry a transaction's journal away, a
// removal delete it.
func (f *FS) journalBelow(c, dirKey string, keys []string) error {
	for _, k := range keys {
		if inJournal(k[len(dirKey):]) {
			return fault.Errorf(fault.CodeDenied, "the directory holds %s, the journal folder of a workspace in it.", path.Join(c, journalDir)).WithPath(c).
				WithHint("move or remove the entries beside it one by one")
		}
	}
	return nil
}

// denied reports a path at or below a deny path.
func (f *FS) denied(c string) bool {
	for _, d := range f.deny {
		if d == "." || c == d || strings.HasPrefix(c, d+"/") {
			return true
		}
	}
	return false
}

// holdsDenied reports a directory with a deny path below it.
func (f *FS) holdsDenied(c string) bool {
	for _, d := range f.deny {
		if c == "." || strings.HasPrefix(d, c+"/") {
			return true
		}
	}
	return false
}

func (f *FS) outside(p string) error {
	return fault.Errorf(fault.CodeOutsideRoot, "the path is outside the workspace %s.", f.root).WithPath(p).
		WithHint("use a path relative to the workspace, without .. above it")
}

// key is the object key of the workspace path c.
func (f *FS) key(c string) string {
	if c == "." {
		return f.prefix
	}
	return f.prefix + c
}

// rel is the path of the object key, below the workspace's prefix.
func (f *FS) rel(key string) string { return strings.TrimPrefix(key, f.prefix) }

// dirKey is the key prefix of the entries of directory c.
func (f *FS) dirKey(c string) string {
	if c == "." {
		return f.prefix
	}
	return f.prefix + c + "/"
}

// Display is the path relative to the workspace, cleaned; it can be
// passed back as input.
func (f *FS) Display(p string) string {
	c, err := f.clean(p)
	if err != nil {
		return p
	}
	return c
}

// fileInfo describes an object.
func fileInfo(name string, o s3client.ObjectInfo) backend.FileInfo {
	return backend.FileInfo{Name: name, Size: o.Size, ModTime: o.LastModified, Type: backend.TypeFile, Version: o.ETag}
}

func dirInfo(name string) backend.FileInfo {
	return backend.FileInfo{Name: name, Type: backend.TypeDir}
}

// mapErr turns a store's error about the workspace path c into the
// contract's.
func (f *FS) mapErr(err error, c string) error {
	if err == nil {
		return nil
	}
	// Before the upload's own failure, which may be an interrupt's.
	var left *s3client.LeftError
	if errors.As(err, &left) {
		return f.uploadsLeft(f.mapErr(left.Err, c), []*s3client.LeftError{left})
	}
	var fe *fault.Error
	if errors.As(err, &fe) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) && !netTimeout(err) {
		return err
	}
	var stall *s3client.StallError
	if errors.As(err, &stall) {
		return fault.Errorf(fault.CodeIOError, "the object store at %s sent nothing for %s.", stall.Host, stall.Wait).WithPath(c).
			WithHint("check that the store at %s is up and reachable, and %s; a request is given up after %s without a byte", stall.Host, f.endpoint, stall.Wait).WithCause(err)
	}
	var se *s3client.Error
	if errors.As(err, &se) && se.Code == s3client.CodeNotS3 {
		return fault.Errorf(fault.CodeIOError, "the endpoint did not answer as an S3 store: %s.", se.Message).WithPath(c).
			WithHint("check %s", f.endpoint).WithCause(err)
	}
	code, status := s3client.Code(err)
	switch {
	case code == "NoSuchBucket":
		if why := bucketNameFault(f.c.Bucket()); why != "" {
			// No bucket can have the name: creating it would fail too.
			return fault.Errorf(fault.CodeInvalidArgument, "%q is not a bucket name: %s.", f.c.Bucket(), why).WithPath(c).
				WithHint("check the bucket in %s: S3 names are 3 to 63 lowercase letters, digits, dots and hyphens, begin and end with a letter or digit, and have no two dots in a row", f.root).WithCause(err)
		}
		return fault.Errorf(fault.CodeNotFound, "the bucket of %s does not exist.", f.root).WithPath(c).
			WithHint("create the bucket, or check the root and %s", f.endpoint).WithCause(errors.Join(fault.ErrNoWorkspace, err))
	case missing(code, status):
		return notFound(c)
	case s3client.Archived(code):
		// Before AccessRefused: AWS's answer, a 403, to a read or a copy
		// of an object archived by its storage class.
		return fault.Errorf(fault.CodeNotSupported, "the object is archived by its storage class (GLACIER, DEEP_ARCHIVE, or an archive tier of INTELLIGENT_TIERING) and cannot be read or copied until it is restored: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("restore it (%s; for an INTELLIGENT_TIERING archive tier, --restore-request '{}'), then retry once aws s3api head-object shows its Restore ongoing-request=\"false\"", s3client.RestoreCommand(f.c.Bucket(), f.key(c))).WithCause(errors.Join(fault.ErrSealed, err))
	case s3client.StoreFull(code, status):
		// Before AccessRefused: a quota's answer is a 403.
		return fault.Errorf(fault.CodeNoSpace, "the object store has no room: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("free space in the store, or raise the bucket's quota, then retry").WithCause(err)
	case s3client.TokenRefused(code):
		return fault.Errorf(fault.CodePermissionDenied, "the object store refused the session token: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("renew the session token (AWS_SESSION_TOKEN, with its AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the profile's aws_session_token), or unset it with long-term keys").WithCause(err)
	case code == "AuthorizationHeaderMalformed":
		// AWS's answer to a signature scoped to another region.
		return fault.Errorf(fault.CodePermissionDenied, "the object store refused the request's signature, made for another region than the bucket's: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("set AWS_REGION to the bucket's region (the message names it), and check AWS_ACCESS_KEY_ID and AWS_SESSION_TOKEN").WithCause(err)
	case s3client.AccessRefused(code, status):
		return fault.Errorf(fault.CodePermissionDenied, "the object store refused access: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY or AWS_PROFILE, and the bucket's policy").WithCause(err)
	case s3client.OtherRegion(code, status):
		return fault.Errorf(fault.CodeNotConfigured, "the bucket of %s is in another region, or at another endpoint: %s.", f.root, strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("set AWS_REGION to the bucket's region, or %s to the endpoint that serves it", f.endpoint).WithCause(err)
	case code == "InvalidBucketName":
		return fault.Errorf(fault.CodeInvalidArgument, "the object store refused the bucket's name: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("check the bucket in %s: S3 names are 3 to 63 lowercase letters, digits, dots and hyphens", f.root).WithCause(err)
	case code == "ObjectParentIsFile":
		// versitygw's answer to a key below an object's (a/b under a): the
		// workspace's own root, when it names an object.
		return fault.Errorf(fault.CodeNotADirectory, "the object store holds a file where the path needs a folder: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("a part of the path is a file: check it with ls, or check --root").WithCause(err)
	case code == "ExistingObjectIsDirectory":
		// versitygw's answer to a directory at the key, and to a name
		// longer than its file system takes.
		return fault.Errorf(fault.CodeNotAFile, "the object store holds a directory there: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("check the path with ls; a store over a file system (versitygw) also answers so to a name over 255 bytes").WithCause(err)
	case customerKey(code, err):
		// AWS's and MinIO's answer to a read of an object under SSE-C.
		return fault.Errorf(fault.CodeNotSupported, "the object is encrypted with a key of its writer's (SSE-C), which agentfs does not hold: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("read or change it with a tool given its key (aws s3 cp --sse-c); agentfs neither reads it nor writes over it, which would drop its encryption").WithCause(errors.Join(fault.ErrSealed, err))
	case invalidRequest(code, status):
		return fault.Errorf(fault.CodeInvalidArgument, "the object store refused the request as invalid: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
			WithHint("check the path: a store may limit a key's length, or a name's (255 bytes on a store over a file system, as versitygw's)").WithCause(err)
	}
	return fault.Errorf(fault.CodeIOError, "the object store failed: %s.", strings.TrimSuffix(err.Error(), ".")).WithPath(c).
		WithHint("retry; if it persists, check %s, the credentials, and that the store is up", f.endpoint).WithCause(err)
}

// netTimeout reports a network operation that timed out, as a connection
// to the store not made in time (or by a process paused past the dial's
// deadline): Go's timeouts match context.DeadlineExceeded, though they
// are the store's failure, not the call's own deadline.
func netTimeout(err error) bool {
	var op *net.OpError
	return errors.As(err, &op)
}

// leftBehind is the cause of a failure, err, that left multipart uploads
// in the bucket, their aborts failed (see s3client.LeftError). It wraps
// neither: a call interrupted said that nothing was left half-done.
type leftBehind struct {
	err   error
	lefts []*s3client.LeftError
}

func (l *leftBehind) Error() string { return l.err.Error() }

// uploadsLeft is err, a failure, saying that it left the uploads lefts:
// each by its id and path, and the command that aborts it, with the
// upload's bucket and key (the first few; details.uploads has them all).
// err may say some already.
func (f *FS) uploadsLeft(err error, lefts []*s3client.LeftError) error {
	e := fault.AsError(err)
	if said, ok := e.Err.(*leftBehind); ok {
		err, lefts = said.err, append(slices.Clone(said.lefts), lefts...)
		e = fault.AsError(err)
	}
	slices.SortFunc(lefts, func(a, b *s3client.LeftError) int { return strings.Compare(a.Key, b.Key) })
	var ids, aborts []string
	uploads := make([]map[string]string, len(lefts))
	for i, l := range lefts {
		if i < named {
			ids = append(ids, fmt.Sprintf("%s of %s (%s)", l.UploadID, f.rel(l.Key), strings.TrimSuffix(l.Abort.Error(), ".")))
			aborts = append(aborts, l.AbortCommand())
		}
		uploads[i] = map[string]string{"key": l.Key, "uploadId": l.UploadID}
	}
	said := fmt.Sprintf("the upload %s of %s is left in the bucket with its parts: its abort failed (%s)", lefts[0].UploadID, f.rel(lefts[0].Key), strings.TrimSuffix(lefts[0].Abort.Error(), "."))
	abort := aborts[0]
	if len(lefts) > 1 {
		said = fmt.Sprintf("%d uploads are left in the bucket with their parts, their aborts failed: %s", len(lefts), strings.Join(ids, ", "))
		abort = strings.Join(aborts, " && ")
	}
	if more := len(lefts) - named; more > 0 {
		said += fmt.Sprintf(" and %d more", more)
		abort += fmt.Sprintf(", and so on for the %d more of details.uploads", more)
	}
	hint := "remove the parts with: " + abort + " (add --endpoint-url for a store other than AWS)"
	if e.Hint != "" {
		hint += "; then " + e.Hint
	}
	out := fault.Errorf(fault.CodeIOError, "%s; and %s.", strings.TrimSuffix(e.Message, "."), said).
		WithHint("%s", hint).WithCause(&leftBehind{err: err, lefts: lefts})
	return out.WithPlaceOf(e).WithDetail("uploads", uploads)
}

// sayLeft is out, the error that reports err in its own words, saying
// the uploads err left, which only err's message said.
func (f *FS) sayLeft(err, out error) error {
	var said *leftBehind
	if !errors.As(err, &said) {
		return out
	}
	return f.uploadsLeft(out, said.lefts)
}

// invalidRequest reports a request the store refused as malformed (400,
// or 414 for a URI too long), which the same request would meet again:
// but for the 400s of a request cut short or timed out, which a retry
// may pass.
func invalidRequest(code string, status int) bool {
	switch code {
	case "RequestTimeout", "IncompleteBody", "BadDigest":
		return false
	}
	return status == http.StatusBadRequest || status == http.StatusRequestURITooLong || code == "KeyTooLongError"
}

// customerKey reports a store's refusal of a request for an object
// encrypted with a key of its writer's (SSE-C) that did not send it.
func customerKey(code string, err error) bool {
	return code == "InvalidRequest" && strings.Contains(strings.ToLower(err.Error()), "server side encryption")
}

func notFound(c string) error {
	return fault.Errorf(fault.CodeNotFound, "no such file or directory.").WithPath(c).
		WithHint("check the path with ls or find")
}

func notSupported(c, what, hint string) error {
	return fault.Errorf(fault.CodeNotSupported, "an object store has no %s.", what).WithPath(c).WithHint("%s", hint)
}

// head describes the object at c, found false when there is none.
func (f *FS) head(ctx context.Context, c string) (s3client.ObjectInfo, bool, error) {
	return f.headKey(ctx, f.key(c))
}

// missing reports an error that says there is no such key: NoSuchKey,
// which s3client also names a HEAD's 404 (it has no body). A 404 with
// another code is not a missing key: versitygw answers a wrong access key
// so (XAdminUserNotFound), which was NOT_FOUND.
func missing(code string, _ int) bool {
	return code == "NoSuchKey"
}

// refused reports a conditional request the store refused, nothing
// changed: the key not at the ETag given (412), or gone (see missing).
func refused(err error) bool {
	code, status := s3client.Code(err)
	return err != nil && (status == http.StatusPreconditionFailed || missing(code, status))
}

// isDir reports whether directory c has an entry or its marker: one
// listing of at most one key.
func (f *FS) isDir(ctx context.Context, c string) (bool, error) {
	if c == "." {
		return true, nil
	}
	for _, err := range f.c.List(ctx, f.dirKey(c), "", 1, "") {
		if err != nil {
			return false, f.mapErr(err, c)
		}
		return true, nil
	}
	return false, nil
}

// holds reports whether the store holds c: a directory with an entry or
// its marker (isDir), else an object.
func (f *FS) holds(ctx context.Context, c string, dir bool) (bool, error) {
	if dir {
		return f.isDir(ctx, c)
	}
	_, found, err := f.head(ctx, c)
	return found, err
}

// missing is the error of a path that is neither an object nor a
// directory: NOT_A_DIRECTORY when an object stands where one of its
// directories should be, else NOT_FOUND.
func (f *FS) missing(ctx context.Context, c string) error {
	if d := f.fileAbove(ctx, c); d != "" {
		return notADirectory(c, d)
	}
	return notFound(c)
}

func notADirectory(c, file string) error {
	return fault.Errorf(fault.CodeNotADirectory, "a part of the path is a file, not a directory.").WithPath(c).
		WithHint("check the path; %s is a file", file)
}

// fileAbove returns the nearest ancestor of c that is an object, "" when
// none is (or the store cannot say).
func (f *FS) fileAbove(ctx context.Context, c string) string {
	for d := path.Dir(c); d != "."; d = path.Dir(d) {
		if _, found, err := f.head(ctx, d); err == nil && found {
			return d
		}
	}
	return ""
}

// Stat describes path: an object is a file, a prefix with keys below it a
// directory. There are no links to follow.
func (f *FS) Stat(ctx context.Context, p string) (backend.FileInfo, error) {
	c, err := f.place(ctx, p)
	if err != nil {
		return backend.FileInfo{}, err
	}
	if c != "." {
		o, found, err := f.head(ctx, c)
		if err != nil {
			return backend.FileInfo{}, err
		}
		if found && !backend.NamesDirectory(p) {
			return fileInfo(path.Base(c), o), nil
		}
		if found {
			// A store may hold c as a file and a directory both (a and
			// a/b, put by another tool): a final slash names the
			// directory, as it does for ls and find.
			if dir, err := f.isDir(ctx, c); err != nil || !dir {
				return fileInfo(path.Base(c), o), err
			}
			return dirInfo(path.Base(c)), nil
		}
	}
	dir, err := f.isDir(ctx, c)
	if err != nil {
		return backend.FileInfo{}, err
	}
	if !dir {
		return backend.FileInfo{}, f.missing(ctx, c)
	}
	return dirInfo(path.Base(c)), nil
}

// Lstat is Stat: a store has no links.
func (f *FS) Lstat(ctx context.Context, p string) (backend.FileInfo, error) { return f.Stat(ctx, p) }

// entries yields the entries of directory c in byte order of their names,
// from the name from on when set, the directory's marker, the
// transactions' journals and denied paths left out. It reads the store's
// delimiter listing page by page, as it is consumed, so the first entries
// cost one request whatever the size of the directory. Keys sort by the
// whole key, in which a directory's name is followed by /, so an entry is
// held back until no key still to come can name one before it (see
// settled).
func (f *FS) entries(ctx context.Context, c, from string, unnamable func(name string)) iter.Seq2[backend.FileInfo, error] {
	dk := f.dirKey(c)
	start := ""
	if from != "" {
		// The keys from from on; what comes before it is skipped by name.
		start = dk + from[:len(from)-1]
	}
	return func(yield func(backend.FileInfo, error) bool) {
		var pending []backend.FileInfo
		emit := func(key string, all bool) bool {
			n := 0
			for n < len(pending) && (all || settled(pending[n].Name, key)) {
				n++
			}
			for _, e := range pending[:n] {
				if e.Name >= from && !yield(e, nil) {
					return false
				}
			}
			pending = pending[n:]
			return true
		}
		listed := false
		for o, err := range f.c.List(ctx, dk, "/", 0, start) {
			if err != nil {
				yield(backend.FileInfo{}, f.mapErr(err, c))
				return
			}
			listed = true
			rel := o.Key[len(dk):]
			name, isDir := strings.CutSuffix(rel, "/")
			if rel == "" {
				continue // the directory's own marker (its key with a final /)
			}
			if !nameable(name) {
				// A key no path can name (x//y, d/./e): not an entry,
				// and never a directory, which a walk would enter again
				// and again (d/. is d); told to the caller.
				if unnamable != nil {
					unnamable(name)
				}
				continue
			}
			if name == journalDir && isDir || f.denied(path.Join(c, name)) {
				continue
			}
			e := fileInfo(name, o)
			if isDir {
				e = dirInfo(name)
			}
			// A file and a directory of one name (a store holds a and
			// a/b): the file first, whichever was released first, so
			// that a walk resumed at the name meets them in one order.
			i, found := slices.BinarySearchFunc(pending, name, func(e backend.FileInfo, n string) int { return strings.Compare(e.Name, n) })
			if found && isDir {
				i++
			}
			pending = slices.Insert(pending, i, e)
			if !emit(rel, false) {
				return
			}
		}
		if !listed && c == "." && start == "" {
			if err := f.rootObject(ctx); err != nil {
				yield(backend.FileInfo{}, err)
				return
			}
		}
		emit("", true)
	}
}

// rootObject fails when the workspace's root, found empty, names an object
// (s3://bucket/dir/file.txt): the workspace is no folder, where it was
// listed as an empty one, and a search of it found nothing with exit 0.
// One HEAD, only for an empty root.
func (f *FS) rootObject(ctx context.Context) error {
	if f.prefix == "" {
		return nil
	}
	_, found, err := f.headKey(ctx, strings.TrimSuffix(f.prefix, "/"))
	if err != nil || !found {
		return err
	}
	return fault.Errorf(fault.CodeNotADirectory, "the root %s names an object, not a folder.", f.root).WithPath(".").
		WithHint("pass the folder that holds it to --root")
}

// settled reports that no key after key can name an entry before name: only
// a directory m/ can, where m is a prefix of name followed in it by a byte
// below /, and only while key is before m/.
func settled(name, key string) bool {
	for i := 1; i < len(name); i++ {
		if name[i] < '/' && key < name[:i]+"/" {
			return false
		}
	}
	return true
}

// nameable reports whether name, a part of a key between two slashes, is
// one a path can name: not empty (x//y), not . or .. (d/./e, d/../e), which
// a store such as S3 or R2 holds as they are.
func nameable(name string) bool { return name != "" && name != "." && name != ".." }

// ReadDir lists entries [offset, offset+limit) of directory path in name
// order, reading the listing up to them.
func (f *FS) ReadDir(ctx context.Context, p string, offset, limit int) (backend.DirPage, error) {
	c, err := f.place(ctx, p)
	if err != nil {
		return backend.DirPage{}, err
	}
	var page backend.DirPage
	n := 0
	for e, err := range f.entries(ctx, c, "", nil) {
		if err != nil {
			return backend.DirPage{}, err
		}
		if n++; n > offset+limit {
			break
		}
		if n > offset {
			page.Entries = append(page.Entries, e)
		}
	}
	if n == 0 {
		if _, err := f.dirOrErr(ctx, c); err != nil {
			return backend.DirPage{}, err
		}
	}
	return page, nil
}

// dirOrErr checks that c, which lists no entries, is a directory (an empty
// one, with its marker): NOT_A_DIRECTORY for a file, NOT_FOUND otherwise.
func (f *FS) dirOrErr(ctx context.Context, c string) (bool, error) {
	fi, err := f.Stat(ctx, c)
	if err != nil {
		return false, err
	}
	if fi.Type != backend.TypeDir {
		return false, fault.NotADirectory(c)
	}
	return true, nil
}

// VersionIsContentHash says that versions are ETags: an object written
// twice with the same bytes has the same version (see
// conformance.ContentVersioned).
func (f *FS) VersionIsContentHash() {}

// readsInFlight bounds the GETs a search keeps in flight: a store answers
// many at once, each mostly a round trip.
const readsInFlight = 16

// ReadsInFlight says how many objects a search fetches at once (see
// backend.RemoteReader).
func (f *FS) ReadsInFlight() int { return readsInFlight }

// bucketNameFault says what makes name no S3 bucket's (AWS's rules for
// general purpose buckets), "" when nothing does. A store may take names
// AWS refuses (Ceph's relaxed names), so it is asked only once the store
// said no such bucket exists: then the name, not a missing bucket, is the
// caller's to fix.
func bucketNameFault(name string) string {
	switch {
	case len(name) < 3 || len(name) > 63:
		return fmt.Sprintf("it has %d characters, not 3 to 63", len(name))
	case strings.ContainsFunc(name, func(r rune) bool { return !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '.' || r == '-') }):
		return "it has a character other than a lowercase letter, a digit, a dot or a hyphen"
	case !alnum(name[0]) || !alnum(name[len(name)-1]):
		return "it does not begin and end with a letter or a digit"
	case strings.Contains(name, ".."):
		return "it has two dots in a row"
	case net.ParseIP(name) != nil:
		return "it is an IP address"
	}
	return ""
}

func alnum(b byte) bool { return 'a' <= b && b <= 'z' || '0' <= b && b <= '9' }

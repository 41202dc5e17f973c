// Package s3store is the S3-compatible target of publish (S3, R2, MinIO,
// versitygw): a file is uploaded under prefix/<sha256>/<name>, in parts
// when it is large, and linked by a presigned GET URL, which the store
// itself checks, so nothing has to be served from this machine.
package s3store

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/agentfs/agentfs/assets"
	"github.com/agentfs/agentfs/fault"
	"github.com/agentfs/agentfs/s3client"
)

// PartSize is the size of one part of an upload; a larger file goes up in
// parts (S3's smallest part is 5 MiB), so that a failure resends one part,
// not the whole file, and memory stays bounded.
const PartSize = 8 << 20

// Scheme starts an --assets value that names a bucket.
const Scheme = "s3://"

// Config says where the store is and who uploads.
type Config struct {
	// Location is s3://bucket/prefix.
	Location string
	// Endpoint is the service's URL (http://127.0.0.1:7070) or host; ""
	// takes AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, then AWS S3 itself.
	Endpoint string
	// IdleTimeout is how long a request waits with no byte moving; 0 is
	// s3client.DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// Store publishes into a bucket.
type Store struct {
	client         *s3client.Client
	bucket, prefix string
}

// New connects to the store of cfg, with credentials from the standard
// AWS_* variables (or the AWS shared credentials file). It makes no
// request: a wrong bucket or key shows at the first upload.
func New(cfg Config) (*Store, error) {
	bucket, prefix, err := parseLocation(cfg.Location)
	if err != nil {
		return nil, err
	}
	endpoint := cfg.Endpoint
	for _, env := range []string{"AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT_URL"} {
		if endpoint == "" {
			endpoint = os.Getenv(env)
		}
	}
	endpointURL := endpoint
	if endpoint != "" && !strings.Contains(endpoint, "://") {
		// A bare host is served over TLS.
		endpointURL = "https://" + endpoint
	}
	if u, err := url.Parse(endpointURL); err == nil && u.Path != "" && u.Path != "/" {
		return nil, fault.InvalidArgument("--s3-endpoint must be a scheme and host without a path, not %q.", endpoint).
			WithHint("give the bucket and prefix in --assets s3://bucket/prefix")
	}
	region := os.Getenv("AWS_REGION")
	if region == "" {
		region = os.Getenv("AWS_DEFAULT_REGION")
	}
	client, err := s3client.New(s3client.Config{Endpoint: strings.TrimSuffix(endpointURL, "/"), Region: region, Bucket: bucket, IdleTimeout: cfg.IdleTimeout})
	if errors.Is(err, s3client.ErrNoCredentials) {
		return nil, fault.Errorf(fault.CodeNotConfigured, "no credentials for the S3 store: %v.", err).
			WithHint("set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (and AWS_REGION when the store needs one)")
	}
	if err != nil {
		return nil, fault.InvalidArgument("the S3 endpoint %q is not usable: %v.", endpoint, err).
			WithHint("give --s3-endpoint as a URL such as https://s3.example.com").WithCause(err)
	}
	return &Store{client: client, bucket: bucket, prefix: prefix}, nil
}

// parseLocation splits s3://bucket/prefix.
func parseLocation(loc string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(loc, Scheme)
	bucket, prefix, _ = strings.Cut(rest, "/")
	if !ok || bucket == "" {
		return "", "", fault.InvalidArgument("--assets %q is not s3://bucket/prefix.", loc).
			WithHint("give --assets s3://bucket or s3://bucket/prefix")
	}
	prefix = strings.Trim(prefix, "/")
	if prefix != "" && slices.ContainsFunc(strings.Split(prefix, "/"), func(seg string) bool { return seg == "" || seg == "." || seg == ".." }) {
		// A browser or curl resolves them in a link before sending it,
		// and the signature of the path sent no longer holds: every link
		// was 403.
		return "", "", fault.InvalidArgument("--assets %q has an empty, . or .. segment in its prefix.", loc).
			WithHint("name the prefix without them: s3://bucket/a/b")
	}
	return bucket, prefix, nil
}

// Key is where an object of the store is kept.
func (s *Store) Key(obj assets.Object) string {
	k := obj.SHA256 + "/" + obj.Name
	if s.prefix != "" {
		k = s.prefix + "/" + k
	}
	return k
}

// SampleLink is a link Put could make for obj: a presigned URL's fields
// all have fixed lengths but the key's and the lifetime's digits.
func (s *Store) SampleLink(obj assets.Object) (string, error) {
	link, err := s.presign(obj, time.Now().UTC())
	if err != nil {
		return "", s.storeError(err, "the link cannot be signed")
	}
	return link, nil
}

func (s *Store) presign(obj assets.Object, now time.Time) (string, error) {
	params := url.Values{"response-content-disposition": {mime.FormatMediaType("inline", map[string]string{"filename": obj.Name})}}
	return s.client.PresignGetAt(s.Key(obj), obj.Lifetime, params, now)
}

// Put uploads content and presigns a GET of it for obj.Lifetime from when
// the upload ends. A failed upload is aborted, parts and all.
func (s *Store) Put(ctx context.Context, obj assets.Object, content io.Reader) (assets.Link, error) {
	key := s.Key(obj)
	h := http.Header{}
	h.Set("Content-Type", obj.MIMEType)
	h.Set("X-Amz-Meta-Sha256", obj.SHA256)
	// Upload sends exactly obj.Size bytes or fails: a short content is an
	// error, and the store's answer confirms what it got.
	if _, err := s.client.Upload(ctx, key, content, obj.Size, PartSize, h); err != nil {
		return assets.Link{}, s.storeError(err, "the upload failed")
	}
	// The link's lifetime counts from its signing time, in whole seconds
	// (X-Amz-Date), which is what the answer says.
	now := time.Now().UTC().Truncate(time.Second)
	link, err := s.presign(obj, now)
	if err != nil {
		return assets.Link{}, s.storeError(err, "the link cannot be signed")
	}
	return assets.Link{URL: link, Expires: now.Add(obj.Lifetime)}, nil
}

// storeError gives an S3 error its code: what the caller can fix (bucket,
// credentials) apart from what a retry may fix.
func (s *Store) storeError(err error, what string) error {
	var left *s3client.LeftError
	if errors.As(err, &left) {
		// Before the upload's own failure, which may be a fault.Error.
		return fault.Errorf(fault.CodeIOError, "%s (%v), and its parts are left in the bucket: aborting the upload %s of %s failed: %v.", what, left.Err, left.UploadID, left.Key, left.Abort).
			WithDetail("uploadId", left.UploadID).WithDetail("key", left.Key).
			WithHint("remove them with: %s (add --endpoint-url for a store other than AWS); then publish again", left.AbortCommand()).
			WithCause(fmt.Errorf("%w: %v", assets.ErrLeft, err)) // not the interrupt's: that answer says nothing is left
	}
	var fe *fault.Error
	if errors.As(err, &fe) {
		return fe
	}
	code, status := s3client.Code(err)
	switch {
	case code == "NoSuchBucket":
		return fault.Errorf(fault.CodeNotConfigured, "%s: the bucket %s does not exist.", what, s.bucket).
			WithHint("create the bucket, or give --assets s3://BUCKET/prefix for one that exists").WithCause(err)
	case s3client.StoreFull(code, status):
		// Before AccessRefused: a quota's answer is a 403.
		return fault.Errorf(fault.CodeNoSpace, "%s: the store has no room (%s).", what, code).
			WithHint("free space in the store, or raise the bucket's quota, then publish again").WithCause(err)
	case s3client.AccessRefused(code, status):
		return fault.Errorf(fault.CodePermissionDenied, "%s: the store refused the credentials (%s).", what, code).
			WithHint("check AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and the bucket's policy").WithCause(err)
	case code == "InvalidBucketName":
		return fault.Errorf(fault.CodeInvalidArgument, "%s: the store refused the bucket's name %q.", what, s.bucket).
			WithHint("check the bucket in --assets: S3 names are 3 to 63 lowercase letters, digits, dots and hyphens").WithCause(err)
	}
	return fault.Errorf(fault.CodeIOError, "%s: %s.", what, strings.TrimSuffix(err.Error(), ".")).
		WithHint("check --s3-endpoint and that the store is reachable, then publish again").WithCause(err)
}

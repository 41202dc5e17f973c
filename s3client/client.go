// Package s3client is the few S3 requests agentfs makes (s3fs's workspace
// backend, publish's S3 target), signed with AWS Signature Version 4 over
// net/http. It exists because Go runs every linked package's initialiser on
// every call of the command line, local ones included: with minio-go
// linked, `agentfs version` spent 3.5 ms in initialisers, without it 2.0
// (GODEBUG=inittrace=1, see bench/startup.md); this package has none.
package s3client

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/hmac"
	"crypto/md5"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"iter"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
)

// Client makes requests to one bucket. It is safe for concurrent use.
type Client struct {
	http      *http.Client
	idle      time.Duration
	scheme    string
	host      string
	pathStyle bool
	bucket    string
	region    string
	cr        Credentials
	// skew is the store's clock minus ours, in nanoseconds, as the Date of
	// its latest answer says (to the second).
	skew atomic.Int64
	// prepare runs before the first request (see Prepare); prepared says
	// it has succeeded, prepMu makes the others wait for it.
	prepare  func(context.Context) error
	prepMu   sync.Mutex
	prepared atomic.Bool
}

// preparing marks the context of the requests prepare makes itself.
type preparing struct{}

// Prepare makes f run before c's first request, and again before the next
// one for as long as it fails, every request waiting for it: a store's
// journals are settled before anything is read or written, yet only when
// the store is used. The requests f makes with the context it is given go
// straight through. An error of f fails the request that ran it, as a
// *PrepareError: never taken for that request's own answer (Code gives
// nothing), so no caller takes a failed recovery for a missing object.
func (c *Client) Prepare(f func(ctx context.Context) error) {
	c.prepare = f
}

// PrepareError is the error of the step Prepare set.
type PrepareError struct{ Err error }

func (e *PrepareError) Error() string { return e.Err.Error() }
func (e *PrepareError) Unwrap() error { return e.Err }

// ready runs the step Prepare set, unless it has succeeded or ctx is its own.
func (c *Client) ready(ctx context.Context) error {
	if c.prepare == nil || c.prepared.Load() || ctx.Value(preparing{}) != nil {
		return nil
	}
	c.prepMu.Lock()
	defer c.prepMu.Unlock()
	if c.prepared.Load() {
		return nil
	}
	if err := c.prepare(context.WithValue(ctx, preparing{}, true)); err != nil {
		return &PrepareError{Err: err}
	}
	c.prepared.Store(true)
	return nil
}

// Config says where a bucket is and who asks.
type Config struct {
	// Endpoint is the store's URL (http://host:port), addressed
	// path-style; "" is AWS S3 of Region, addressed by virtual host.
	Endpoint string
	// Region defaults to us-east-1.
	Region string
	Bucket string
	// Credentials, when they have an access key, sign every request; else
	// New finds them (see LoadCredentials).
	Credentials Credentials
	// Transport, when set, carries every request (a test counts them);
	// else NewTransport(IdleTimeout) does.
	Transport http.RoundTripper
	// IdleTimeout is how long a request waits with no byte moving (to
	// connect, while its body is sent, for the answer, between two reads
	// of the answer's body) before it fails with a *StallError; 0 is
	// DefaultIdleTimeout.
	IdleTimeout time.Duration
}

// DefaultIdleTimeout bounds the wait of a request on a store that stopped
// answering, without cutting a slow transfer that still moves: AWS's own
// clients wait 60 seconds for a byte.
const DefaultIdleTimeout = 60 * time.Second

// StallError is the error of a request during which no byte moved for
// Wait: a store that accepts a connection and never answers would else
// hold the call until a signal.
type StallError struct {
	Host string
	Wait time.Duration
}

func (e *StallError) Error() string {
	return fmt.Sprintf("the store at %s sent nothing for %s", e.Host, e.Wait)
}

// NewTransport is Go's default transport whose connections, dial and TLS
// handshake, are left to the idle timeout idle (0 is DefaultIdleTimeout)
// that watches each request, not cut at Go's 30 s and 10 s: a caller of
// --s3-idle-timeout 120s was cut at 30 s by a store slow to accept. Go
// goes on with a dial its request gave up (a later one may use the
// connection), so each is bounded too, at twice idle: at idle itself it
// raced the request's watchdog, and its error, a bare "i/o timeout", won
// one CLI run in two against a store that never accepts.
func NewTransport(idle time.Duration) *http.Transport {
	idle = 2 * cmp.Or(idle, DefaultIdleTimeout)
	var t *http.Transport
	if d, ok := http.DefaultTransport.(*http.Transport); ok {
		t = d.Clone()
	} else {
		t = &http.Transport{Proxy: http.ProxyFromEnvironment, ForceAttemptHTTP2: true, MaxIdleConns: 100, IdleConnTimeout: 90 * time.Second}
	}
	t.DialContext = (&net.Dialer{Timeout: idle, KeepAlive: 30 * time.Second}).DialContext
	t.TLSHandshakeTimeout = idle
	return t
}

// New makes a client of cfg: an error for an endpoint that is not a URL,
// else ErrNoCredentials when it finds no keys. It makes no request: a
// missing bucket or refused credentials show at the first one.
func New(cfg Config) (*Client, error) {
	region := cfg.Region
	if region == "" {
		region = "us-east-1"
	}
	idle := cmp.Or(cfg.IdleTimeout, DefaultIdleTimeout)
	transport := cfg.Transport
	if transport == nil {
		transport = NewTransport(idle)
	}
	c := &Client{http: &http.Client{Transport: transport}, idle: idle,
		scheme: "https", host: "s3." + region + ".amazonaws.com", bucket: cfg.Bucket, region: region}
	if cfg.Endpoint != "" {
		u, err := url.Parse(cfg.Endpoint)
		if err != nil || u.Host == "" || u.Scheme != "http" && u.Scheme != "https" {
			return nil, fmt.Errorf("the endpoint %q is not an http or https URL", cfg.Endpoint)
		}
		c.scheme, c.host, c.pathStyle = u.Scheme, u.Host, true
	}
	cr, err := LoadCredentials(cfg.Credentials)
	if err != nil {
		return nil, err
	}
	c.cr = cr
	return c, nil
}

// Now is the time on the store's clock, as the Date of its latest answer
// gives it (to the second; ours before the first answer): LastModified is
// of that clock.
func (c *Client) Now() time.Time { return time.Now().Add(time.Duration(c.skew.Load())) }

// Bucket is the bucket the client asks about.
func (c *Client) Bucket() string { return c.bucket }

// Credentials are the keys that sign a request.
type Credentials struct {
	AccessKey, SecretKey, SessionToken string
}

// CodeNotS3 is the code of a 404 without an S3 error to a request other
// than a HEAD: the endpoint is not an S3 store.
const CodeNotS3 = "NotAnS3Store"

// Error is a store's error answer.
type Error struct {
	Status  int    `xml:"-"`
	Code    string `xml:"Code"`
	Message string `xml:"Message"`
}

func (e *Error) Error() string {
	if e.Message == "" {
		return fmt.Sprintf("%s (HTTP %d)", e.Code, e.Status)
	}
	return e.Message
}

// ObjectInfo is what a HEAD or a listing says of an object; a listing's
// common prefix has only its Key, ending in /.
type ObjectInfo struct {
	Key          string
	Size         int64
	ETag         string
	LastModified time.Time
	// Meta is the user metadata a HEAD answered (x-amz-meta-NAME:
	// value), by NAME in lower case; nil when none.
	Meta map[string]string
	// Kept holds the headers of the answer that a copy keeps beside the
	// user metadata (Content-Type, Cache-Control and the like: see kept);
	// nil when none.
	Kept http.Header
	// Stored holds the headers of the answer that say how the object is
	// stored and that a PUT sets again, which a copy does not keep: its
	// storage class, and its encryption under a KMS key (see stored);
	// nil when none.
	Stored http.Header
	// Tags is how many tags the object has (x-amz-tagging-count): a HEAD
	// or a GET does not give them, Tagging does.
	Tags int
	// Mangled says a listing gave Key unescaped (the store ignored
	// encoding-type=url) with a U+FFFD in it: such a store (versitygw)
	// writes so each byte XML cannot carry, so the key stored may be
	// another.
	Mangled bool
}

// Code is the S3 error code of err, with its HTTP status; "" and 0 when
// err is not a store's answer, or is one to the step Prepare set.
func Code(err error) (string, int) {
	var e *Error
	var p *PrepareError
	if !errors.As(err, &p) && errors.As(err, &e) {
		return e.Code, e.Status
	}
	return "", 0
}

// AccessRefused reports whether a store's answer (its code and status,
// as Code gives them) refuses the caller's credentials or access, which
// a retry cannot pass: a session token refused or expired, and a
// signature scoped to another region than the bucket's, are too (400s).
func AccessRefused(code string, status int) bool {
	switch code {
	case "AccessDenied", "InvalidAccessKeyId", "SignatureDoesNotMatch", "NoCredentials",
		"XAdminUserNotFound", // versitygw's answer, a 404, to an access key it does not know
		"AuthorizationHeaderMalformed":
		return true
	}
	return TokenRefused(code) || status == http.StatusForbidden
}

// Archived reports whether a store's answer (its code, as Code gives
// it) refuses to read or copy an object its storage class keeps archived
// until it is restored: AWS's InvalidObjectState, a 403, to a GET of an
// object in GLACIER or DEEP_ARCHIVE, or in an archive tier of
// INTELLIGENT_TIERING, and to a CopyObject from it.
func Archived(code string) bool {
	return code == "InvalidObjectState"
}

// RestoreCommand is the command that restores the archived object key
// of bucket for a day, which a read of it waits for.
func RestoreCommand(bucket, key string) string {
	return fmt.Sprintf("aws s3api restore-object --bucket %s --key %s --restore-request Days=1", shellQuote(bucket), shellQuote(key))
}

// TokenRefused reports whether code refuses the request's session token.
func TokenRefused(code string) bool {
	return code == "InvalidToken" || code == "ExpiredToken" || code == "TokenRefreshRequired"
}

// OtherRegion reports whether a store's answer says the bucket is served
// from another region or endpoint than the one asked: AWS's
// PermanentRedirect, a 301 (with no body to a HEAD).
func OtherRegion(code string, status int) bool {
	return code == "PermanentRedirect" || status == http.StatusMovedPermanently
}

// StoreFull reports whether a store's answer (its code and status, as
// Code gives them) says it has no room for what was sent: full (507
// InsufficientStorage, versitygw's over a full disk; MinIO's
// XMinioStorageFull) or over a quota (Ceph's QuotaExceeded, a 403),
// which a retry cannot pass.
func StoreFull(code string, status int) bool {
	switch code {
	case "InsufficientStorage", "XMinioStorageFull", "QuotaExceeded":
		return true
	}
	return status == http.StatusInsufficientStorage
}

// awsEscape percent-encodes s as SigV4 wants it: every byte but the
// unreserved ones, and / too unless keepSlash.
func awsEscape(s string, keepSlash bool) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'A' <= c && c <= 'Z' || 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' || c == '/' && keepSlash {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// LoadCredentials finds the keys as every AWS client does: static when it
// has an access key, else the AWS_* variables, then the shared credentials
// file's profile (AWS_PROFILE, else default). An error that is
// ErrNoCredentials says none were found, and what is missing: an access
// key without its secret cannot sign.
func LoadCredentials(static Credentials) (Credentials, error) {
	if static.AccessKey != "" {
		return static, nil
	}
	if ak := os.Getenv("AWS_ACCESS_KEY_ID"); ak != "" {
		cr := Credentials{ak, os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN")}
		if cr.SecretKey == "" {
			return Credentials{}, noCredentials("AWS_ACCESS_KEY_ID is set, AWS_SECRET_ACCESS_KEY is not")
		}
		return cr, nil
	}
	file := os.Getenv("AWS_SHARED_CREDENTIALS_FILE")
	if file == "" {
		home, _ := os.UserHomeDir()
		file = filepath.Join(home, ".aws", "credentials")
	}
	profile := os.Getenv("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	f, err := os.Open(file)
	if err != nil {
		return Credentials{}, noCredentials(fmt.Sprintf("AWS_ACCESS_KEY_ID is not set, and the shared credentials file cannot be read: %v", err))
	}
	defer f.Close()
	var cr Credentials
	section, found := "", false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]") {
			section = strings.TrimSpace(line[1 : len(line)-1])
			found = found || section == profile
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || section != profile {
			continue
		}
		switch strings.TrimSpace(k) {
		case "aws_access_key_id":
			cr.AccessKey = strings.TrimSpace(v)
		case "aws_secret_access_key":
			cr.SecretKey = strings.TrimSpace(v)
		case "aws_session_token":
			cr.SessionToken = strings.TrimSpace(v)
		}
	}
	switch {
	case !found:
		return Credentials{}, noCredentials(fmt.Sprintf("AWS_ACCESS_KEY_ID is not set, and the profile %q is not in %s", profile, file))
	case cr.AccessKey == "":
		return Credentials{}, noCredentials(fmt.Sprintf("the profile %q in %s has no aws_access_key_id", profile, file))
	case cr.SecretKey == "":
		return Credentials{}, noCredentials(fmt.Sprintf("the profile %q in %s has no aws_secret_access_key", profile, file))
	}
	return cr, nil
}

// ErrNoCredentials is LoadCredentials' answer when it finds no keys.
var ErrNoCredentials = &Error{Code: "NoCredentials", Message: "no credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE"}

// missingCredentials is ErrNoCredentials saying what is missing.
type missingCredentials struct{ why string }

func (m *missingCredentials) Error() string { return m.why }
func (m *missingCredentials) Unwrap() error { return ErrNoCredentials }

func noCredentials(why string) error { return &missingCredentials{why} }

// request is one request to the bucket: key "" is the bucket itself.
type request struct {
	method string
	key    string
	query  url.Values
	header http.Header
	body   []byte
}

// retryWaits are the pauses before a read is sent again after a
// transient error (see transient), each stretched by up to half at
// random so that clients slowed down together do not return together:
// about 2 s in all, as the AWS SDKs' standard retries.
var retryWaits = []time.Duration{100 * time.Millisecond, 400 * time.Millisecond, 1600 * time.Millisecond}

// do signs and sends r; an answer other than 2xx is an *Error. A read
// (GET, HEAD) the store fails with a transient error is sent again, up
// to len(retryWaits) times. A write is not: one the store made before it
// failed, sent again, would be refused by its condition (or applied
// twice), and its callers judge such a failure by the object instead.
func (c *Client) do(ctx context.Context, r request) (*http.Response, error) {
	for try := 0; ; try++ {
		resp, err := c.send(ctx, r)
		if try == len(retryWaits) || !transient(r, err) {
			return resp, err
		}
		wait := retryWaits[try] + rand.N(retryWaits[try]/2)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w, giving up after: %w", context.Cause(ctx), err)
		case <-t.C:
		}
	}
}

// transient reports whether err, the answer to r, is one the store says
// to try again later (500, 502, 503, 504: SlowDown, InternalError) and r
// a read, which may be sent again.
func transient(r request, err error) bool {
	var e *Error
	if r.method != http.MethodGet && r.method != http.MethodHead || !errors.As(err, &e) {
		return false
	}
	switch e.Status {
	case http.StatusInternalServerError, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	return false
}

// send signs and sends r once.
func (c *Client) send(ctx context.Context, r request) (*http.Response, error) {
	if err := c.ready(ctx); err != nil {
		return nil, err
	}
	host, path := c.target(r.key)
	rawQuery := canonicalQuery(r.query)
	w := c.watch(ctx, host)
	req, err := http.NewRequestWithContext(w.ctx, r.method, c.scheme+"://"+host+"/", nil)
	if err != nil {
		w.end()
		return nil, err
	}
	// The path goes on the wire as it is signed, never escaped again.
	req.URL.Opaque, req.URL.RawQuery = path, rawQuery
	req.ContentLength = int64(len(r.body))
	req.Body, req.GetBody = http.NoBody, nil
	var body *sending
	if len(r.body) > 0 {
		// Each part of the body the transport takes is a byte sent.
		req.GetBody = func() (io.ReadCloser, error) {
			body = &sending{r: bytes.NewReader(r.body), w: w}
			return io.NopCloser(body), nil
		}
		req.Body, _ = req.GetBody()
	}
	for k, vs := range r.header {
		req.Header[k] = vs
	}
	sum := sha256.Sum256(r.body)
	payload := hex.EncodeToString(sum[:])
	now := time.Now().UTC()
	amzDate, day := now.Format("20060102T150405Z"), now.Format("20060102")
	req.Header.Set("X-Amz-Date", amzDate)
	req.Header.Set("X-Amz-Content-Sha256", payload)
	if c.cr.SessionToken != "" {
		req.Header.Set("X-Amz-Security-Token", c.cr.SessionToken)
	}
	signed := []string{"host"}
	canonHeaders := "host:" + host + "\n"
	var amz []string
	for k := range req.Header {
		if lk := strings.ToLower(k); strings.HasPrefix(lk, "x-amz-") {
			amz = append(amz, lk)
		}
	}
	sort.Strings(amz)
	for _, k := range amz {
		signed = append(signed, k)
		canonHeaders += k + ":" + strings.TrimSpace(req.Header.Get(k)) + "\n"
	}
	signedHeaders := strings.Join(signed, ";")
	canon := strings.Join([]string{r.method, path, rawQuery, canonHeaders, signedHeaders, payload}, "\n")
	req.Header.Set("Authorization", "AWS4-HMAC-SHA256 Credential="+c.cr.AccessKey+"/"+c.scope(day)+
		", SignedHeaders="+signedHeaders+", Signature="+c.signature(now, canon))
	resp, err := c.http.Do(req)
	w.disarm()
	if err != nil {
		w.end()
		// The URL of a url.Error is the opaque form: the host says more.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		var dial *net.OpError
		unconnected := r.method != http.MethodGet && r.method != http.MethodHead && errors.As(err, &dial) && dial.Op == "dial"
		if body != nil && !body.whole.Load() || unconnected {
			return nil, fmt.Errorf("%s %s: %w: %w", r.method, host, ErrUnsent, w.cause(err))
		}
		return nil, fmt.Errorf("%s %s: %w", r.method, host, w.cause(err))
	}
	resp.Body = &receiving{ReadCloser: resp.Body, w: w}
	if date, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
		c.skew.Store(int64(time.Until(date)))
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	e := &Error{Status: resp.StatusCode}
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	_ = xml.Unmarshal(data, e) // a HEAD's answer has no body: the status says it
	if e.Code == "" {
		switch resp.StatusCode {
		case http.StatusNotFound:
			e.Code = "NoSuchKey"
			if r.method != http.MethodHead {
				// A store names what is missing: a 404 with no S3 error
				// to a request with an answer body is some other
				// service's (a proxy's), not a missing key.
				e.Code, e.Message = CodeNotS3, fmt.Sprintf("%s answered %s to a %s without an S3 error", host, resp.Status, r.method)
			}
		case http.StatusPreconditionFailed:
			e.Code = "PreconditionFailed"
		case http.StatusForbidden:
			e.Code = "AccessDenied"
		default:
			e.Code = resp.Status
		}
	}
	return nil, e
}

// watchdog fails a request, by cancelling its context, once no byte moved
// for its wait while the request waited on the store: its own caller's
// pauses between two reads of the answer do not count.
type watchdog struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	timer  *time.Timer
	wait   time.Duration
	stall  *StallError
}

// watch starts the watchdog of a request to host, armed.
func (c *Client) watch(ctx context.Context, host string) *watchdog {
	w := &watchdog{wait: c.idle, stall: &StallError{Host: host, Wait: c.idle}}
	w.ctx, w.cancel = context.WithCancelCause(ctx)
	w.timer = time.AfterFunc(w.wait, func() { w.cancel(w.stall) })
	return w
}

func (w *watchdog) arm()    { w.timer.Reset(w.wait) }
func (w *watchdog) disarm() { w.timer.Stop() }

// end releases the request's context once the request is done.
func (w *watchdog) end() {
	w.timer.Stop()
	w.cancel(nil)
}

// cause is err, or the stall that made it.
func (w *watchdog) cause(err error) error {
	if err != nil && err != io.EOF && context.Cause(w.ctx) == error(w.stall) {
		return w.stall
	}
	return err
}

// ErrUnsent marks the failure of a request whose body the transport never
// took whole, or of a change whose connection was never made (a body of
// no bytes is never taken): the store cannot have acted on it. A store that refuses a
// conditional PUT before reading its body (versitygw's 412) and closes the
// connection loses its answer in the reset of the body's writes.
var ErrUnsent = errors.New("the connection failed before the whole body was sent, so nothing was written")

// AnswerLost reports whether err, a write's failure, left unknown whether
// the store made it: its body went out whole and no answer of the store's
// came back (the connection failed, or stalled), or a 5xx came, which a
// gateway in front of the store may give for a request the store made.
// The write is then judged by the object. Any other answer of the store
// (a 4xx, a full store's 507) refused it.
func AnswerLost(err error) bool {
	var p *PrepareError
	if err == nil || errors.Is(err, ErrUnsent) || errors.Is(err, context.Canceled) || errors.As(err, &p) {
		return false
	}
	var e *Error
	return !errors.As(err, &e) || e.Status >= http.StatusInternalServerError && !StoreFull(e.Code, e.Status)
}

// sending is a request's body: each read of it is progress.
type sending struct {
	r *bytes.Reader
	w *watchdog
	// whole is set once the transport asked for more past the last byte,
	// which it does once it has written them all (net/http checks that a
	// body holds no more than its length): a failure after that may have
	// reached the store. Set as the last byte was read, a reset met by the
	// write of the last piece (versitygw's early 412) was taken for one
	// after the body went out whole: IO_ERROR for a lost race, 2 tries in
	// 30 of TestLostRaceOfALargeBody.
	whole atomic.Bool
}

func (s *sending) Read(p []byte) (int, error) {
	s.w.arm()
	n, err := s.r.Read(p)
	if err == io.EOF {
		s.whole.Store(true)
	}
	return n, err
}

// receiving is an answer's body, watched while a read waits on the store.
type receiving struct {
	io.ReadCloser
	w *watchdog
}

func (r *receiving) Read(p []byte) (int, error) {
	r.w.arm()
	n, err := r.ReadCloser.Read(p)
	r.w.disarm()
	return n, r.w.cause(err)
}

func (r *receiving) Close() error {
	err := r.ReadCloser.Close()
	r.w.end()
	return err
}

// target is the host and the escaped path of key ("" is the bucket).
func (c *Client) target(key string) (host, path string) {
	host, path = c.host, "/"+awsEscape(key, true)
	if c.pathStyle {
		return host, "/" + c.bucket + path
	}
	return c.bucket + "." + host, path
}

// canonicalQuery is q escaped and sorted as SigV4 signs it, and as it is
// sent.
func canonicalQuery(q url.Values) string {
	var query []string
	for k, vs := range q {
		for _, v := range vs {
			query = append(query, awsEscape(k, false)+"="+awsEscape(v, false))
		}
	}
	sort.Strings(query)
	return strings.Join(query, "&")
}

// scope is the credential scope of a signature made on day (20060102).
func (c *Client) scope(day string) string {
	return day + "/" + c.region + "/s3/aws4_request"
}

// signature signs the canonical request canon at t (UTC).
func (c *Client) signature(t time.Time, canon string) string {
	day := t.Format("20060102")
	h := sha256.Sum256([]byte(canon))
	toSign := "AWS4-HMAC-SHA256\n" + t.Format("20060102T150405Z") + "\n" + c.scope(day) + "\n" + hex.EncodeToString(h[:])
	key := []byte("AWS4" + c.cr.SecretKey)
	for _, part := range []string{day, c.region, "s3", "aws4_request"} {
		key = hmacSHA256(key, part)
	}
	return hex.EncodeToString(hmacSHA256(key, toSign))
}

func hmacSHA256(key []byte, data string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(data))
	return m.Sum(nil)
}

// info reads an object's description from the headers of its answer.
func info(key string, h http.Header, size int64) ObjectInfo {
	mod, _ := http.ParseTime(h.Get("Last-Modified"))
	o := ObjectInfo{Key: key, Size: size, ETag: strings.Trim(h.Get("ETag"), `"`), LastModified: mod.UTC()}
	for k, v := range h {
		if name, ok := strings.CutPrefix(strings.ToLower(k), "x-amz-meta-"); ok && len(v) > 0 {
			if o.Meta == nil {
				o.Meta = map[string]string{}
			}
			o.Meta[name] = v[0]
		}
		if k = http.CanonicalHeaderKey(k); kept[k] && len(v) > 0 {
			if o.Kept == nil {
				o.Kept = http.Header{}
			}
			o.Kept[k] = v
		}
		if stored[k] && len(v) > 0 {
			if o.Stored == nil {
				o.Stored = http.Header{}
			}
			o.Stored[k] = v
		}
	}
	o.Tags, _ = strconv.Atoi(h.Get("X-Amz-Tagging-Count"))
	if !UnderKMS(o.Stored) {
		// SSE-S3 (AES256), the default of a bucket with no other: the
		// bucket's default then applies, as to a new object.
		for k := range o.Stored {
			if strings.HasPrefix(k, "X-Amz-Server-Side-Encryption") {
				delete(o.Stored, k)
			}
		}
	}
	return o
}

// UnderKMS says whether the headers an object is stored with (see
// ObjectInfo.Stored) encrypt it under a KMS key (aws:kms, aws:kms:dsse),
// which makes its ETag no MD5 of its bytes and is set again on a PUT.
func UnderKMS(stored http.Header) bool {
	return strings.HasPrefix(stored.Get("X-Amz-Server-Side-Encryption"), "aws:kms")
}

// stored are the headers of an object that a PUT sets again (see
// ObjectInfo.Stored). An object under a key of its writer's (SSE-C) is
// not among them: without that key it cannot be read, nor written so.
var stored = map[string]bool{"X-Amz-Storage-Class": true, "X-Amz-Server-Side-Encryption": true,
	"X-Amz-Server-Side-Encryption-Aws-Kms-Key-Id": true, "X-Amz-Server-Side-Encryption-Bucket-Key-Enabled": true}

// Condition is a header of If-Match ifMatch (an ETag) and If-None-Match
// ifNoneMatch, each when set.
func Condition(ifMatch, ifNoneMatch string) http.Header {
	h := http.Header{}
	if ifMatch != "" {
		h.Set("If-Match", `"`+ifMatch+`"`)
	}
	if ifNoneMatch != "" {
		h.Set("If-None-Match", ifNoneMatch)
	}
	return h
}

// Head describes the object at key. A HEAD's failure has no body to say
// why, so that a 400 with no more is asked again as a GET of the first
// byte, whose error says it: AWS answers so for an object encrypted with
// a key of its writer's (SSE-C), which the request did not send.
func (c *Client) Head(ctx context.Context, key string) (ObjectInfo, error) {
	resp, err := c.do(ctx, request{method: http.MethodHead, key: key})
	var e *Error
	if errors.As(err, &e) && e.Status == http.StatusBadRequest && e.Message == "" {
		return ObjectInfo{}, c.why(ctx, key, err)
	}
	if err != nil {
		return ObjectInfo{}, err
	}
	resp.Body.Close()
	return info(key, resp.Header, resp.ContentLength), nil
}

// why is the error a GET of the first byte of key answers, said by the
// store, in the stead of err, a HEAD's bare 400; err when the GET says
// no more.
func (c *Client) why(ctx context.Context, key string, err error) error {
	resp, gerr := c.do(ctx, request{method: http.MethodGet, key: key, header: http.Header{"Range": {"bytes=0-0"}}})
	var e *Error
	if errors.As(gerr, &e) && e.Status == http.StatusBadRequest && e.Message != "" {
		return gerr
	}
	if gerr == nil {
		resp.Body.Close()
	}
	return err
}

// Get streams [off, off+n) of the object at key (all of it when n is 0),
// If-Match etag when set. Of a store that ignores the range and sends the
// whole object (200), the bytes before off are skipped and those after
// off+n left unread: they were served as the window's.
func (c *Client) Get(ctx context.Context, key, etag string, off, n int64) (io.ReadCloser, error) {
	if n == 0 {
		off = 0 // the body starts at the object's start, where a resume counts from
	}
	body, etag, end, err := c.window(ctx, key, etag, off, n)
	if err != nil {
		return nil, err
	}
	return c.resuming(ctx, key, etag, off, end, body), nil
}

// window is Get's body, without its resumption, with the ETag of the
// version it holds and the offset where its bytes end (-1 unknown).
func (c *Client) window(ctx context.Context, key, etag string, off, n int64) (io.ReadCloser, string, int64, error) {
	resp, err := c.get(ctx, key, etag, off, n)
	if err != nil {
		return nil, "", 0, err
	}
	if etag == "" {
		etag = strings.Trim(resp.Header.Get("ETag"), `"`)
	}
	if n == 0 {
		return resp.Body, etag, resp.ContentLength, nil
	}
	// end is where the window's bytes end: the object's end, when the
	// window reaches past it.
	end := off + n
	switch start, last, _ := contentRange(resp.Header.Get("Content-Range")); {
	case resp.StatusCode == http.StatusPartialContent && start != off:
		resp.Body.Close()
		return nil, "", 0, fmt.Errorf("GET %s: the store answered the range %d-%d with %q", key, off, off+n-1, resp.Header.Get("Content-Range"))
	case resp.StatusCode != http.StatusPartialContent:
		if resp.ContentLength >= 0 {
			end = min(end, resp.ContentLength)
		}
		if _, err := io.CopyN(io.Discard, resp.Body, off); err != nil {
			resp.Body.Close()
			return nil, "", 0, fmt.Errorf("GET %s: %w", key, err)
		}
	default:
		end = min(end, last+1)
	}
	return struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, n), resp.Body}, etag, end, nil
}

// resuming is body, [pos, end) of the version etag of the object at key,
// made to go on past a connection cut in the middle of it (reset, closed
// early): the rest is asked again from where it stopped, If-Match etag,
// and the answer's own ETag checked, so that two versions are never
// spliced: the object changed or gone meanwhile ends the read with the
// store's 412 or 404, an *Error. A body of no ETag or of no known end is
// left as it is, and so is a stall (its wait is the idle timeout the
// caller set) or the caller's own cancellation.
func (c *Client) resuming(ctx context.Context, key, etag string, pos, end int64, body io.ReadCloser) io.ReadCloser {
	if etag == "" || strings.HasPrefix(etag, "W/") || end < 0 {
		return body
	}
	return &resumer{c: c, ctx: ctx, key: key, etag: etag, pos: pos, end: end, body: body}
}

type resumer struct {
	c         *Client
	ctx       context.Context
	key, etag string
	pos, end  int64
	body      io.ReadCloser
	// fails counts the resumes since the last byte came, resumes all of
	// them: a link cut every few KiB ends the read, rather than sending a
	// GET per few KiB.
	fails, resumes int
	err            error
}

// maxResumes bounds the resumes of one body.
const maxResumes = 8

func (r *resumer) Read(p []byte) (int, error) {
	for {
		if r.err != nil {
			return 0, r.err
		}
		n, err := r.body.Read(p)
		r.pos += int64(n)
		if n > 0 {
			r.fails = 0
		}
		if err == io.EOF && r.pos < r.end {
			err = io.ErrUnexpectedEOF
		}
		if err != nil && r.pos >= r.end {
			// Every byte came: nothing is left to resume, and a GET of
			// none (n 0) would be the whole object again.
			err = io.EOF
		}
		if err == nil || err == io.EOF || !r.resumable(err) {
			return n, err
		}
		r.body.Close()
		r.body, r.err = r.resume(err)
		if n > 0 {
			return n, nil
		}
	}
}

// resumable says whether the failure err of the body may be resumed: a
// cut connection, not a stall, the call's cancellation, or a retry's own
// failure, and fewer than len(retryWaits) resumes in a row got nothing,
// fewer than maxResumes in all.
func (r *resumer) resumable(err error) bool {
	var stall *StallError
	var e *Error
	return r.fails < len(retryWaits) && r.resumes < maxResumes && r.ctx.Err() == nil && !errors.As(err, &stall) && !errors.As(err, &e) &&
		!errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded)
}

// resume asks for the rest, once the pause of its try has passed (none
// for the first); cut is the failure it resumes after.
func (r *resumer) resume(cut error) (io.ReadCloser, error) {
	if r.fails > 0 {
		wait := retryWaits[r.fails-1] + rand.N(retryWaits[r.fails-1]/2)
		t := time.NewTimer(wait)
		select {
		case <-r.ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w, giving up after: %w", context.Cause(r.ctx), cut)
		case <-t.C:
		}
	}
	r.fails++
	r.resumes++
	body, _, _, err := r.c.window(r.ctx, r.key, r.etag, r.pos, r.end-r.pos)
	if err != nil {
		return nil, fmt.Errorf("GET %s from byte %d, after %v: %w", r.key, r.pos, cut, err)
	}
	return body, nil
}

func (r *resumer) Close() error {
	if r.body == nil {
		return nil
	}
	return r.body.Close()
}

// GetObject streams all of the object at key and describes the version
// it serves, as a HEAD does (ETag, user metadata; Size is Content-Length).
func (c *Client) GetObject(ctx context.Context, key string) (io.ReadCloser, ObjectInfo, error) {
	resp, err := c.get(ctx, key, "", 0, 0)
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	o := info(key, resp.Header, resp.ContentLength)
	return c.resuming(ctx, key, o.ETag, 0, resp.ContentLength, resp.Body), o, nil
}

// GetFirst streams the first n bytes (n > 0) of the object at key,
// whatever its version, and describes that version as a HEAD does (ETag,
// Last-Modified, user metadata; Size is the whole object's, from
// Content-Range): one request where a HEAD and a GET were two. The body
// holds min(n, Size) bytes: of a store that ignores the range and sends
// the whole object (200), the rest is left unread. An empty object, which
// a store refuses any range of (416 InvalidRange), is asked again without
// one.
func (c *Client) GetFirst(ctx context.Context, key string, n int64) (io.ReadCloser, ObjectInfo, error) {
	resp, err := c.get(ctx, key, "", 0, n)
	if _, status := Code(err); status == http.StatusRequestedRangeNotSatisfiable {
		resp, err = c.get(ctx, key, "", 0, 0)
	}
	if err != nil {
		return nil, ObjectInfo{}, err
	}
	size, end := resp.ContentLength, resp.ContentLength
	if resp.StatusCode == http.StatusPartialContent {
		var start int64
		start, end, size = contentRange(resp.Header.Get("Content-Range"))
		if start != 0 || end < 0 || size < 0 || end+1 != min(n, size) || resp.ContentLength >= 0 && resp.ContentLength != end+1 {
			resp.Body.Close()
			return nil, ObjectInfo{}, fmt.Errorf("GET %s: the store answered the range 0-%d with %q (%d bytes)", key, n-1, resp.Header.Get("Content-Range"), resp.ContentLength)
		}
		end++
	}
	if size < 0 {
		resp.Body.Close()
		return nil, ObjectInfo{}, fmt.Errorf("GET %s: the store's answer gave no length", key)
	}
	body := struct {
		io.Reader
		io.Closer
	}{io.LimitReader(resp.Body, min(n, end)), resp.Body}
	o := info(key, resp.Header, size)
	return c.resuming(ctx, key, o.ETag, 0, min(n, end), body), o, nil
}

// contentRange parses a Content-Range "bytes START-END/SIZE": -1s when it
// does not parse, size -1 when it is * (unknown).
func contentRange(s string) (start, end, size int64) {
	rng, total, ok := strings.Cut(strings.TrimPrefix(s, "bytes "), "/")
	first, last, ok2 := strings.Cut(rng, "-")
	a, err1 := strconv.ParseInt(first, 10, 64)
	b, err2 := strconv.ParseInt(last, 10, 64)
	if !strings.HasPrefix(s, "bytes ") || !ok || !ok2 || err1 != nil || err2 != nil || a < 0 || b < a {
		return -1, -1, -1
	}
	if t, err := strconv.ParseInt(total, 10, 64); err == nil && t > b {
		return a, b, t
	}
	if total != "*" {
		return -1, -1, -1
	}
	return a, b, -1
}

// get is Get's response.
func (c *Client) get(ctx context.Context, key, etag string, off, n int64) (*http.Response, error) {
	h := Condition(etag, "")
	// The bytes stored: unasked, Go's transport asks for gzip and
	// decodes an object stored gzip-encoded, dropping its
	// Content-Encoding and length (a copy lost both, a read saw other
	// bytes than the ETag's).
	h.Set("Accept-Encoding", "identity")
	if n > 0 {
		h.Set("Range", "bytes="+strconv.FormatInt(off, 10)+"-"+strconv.FormatInt(off+n-1, 10))
	}
	resp, err := c.do(ctx, request{method: http.MethodGet, key: key, header: h})
	if err != nil {
		return nil, err
	}
	// A store may check If-Match and then serve a version written in
	// between (versitygw's posix backend did, under 8 concurrent writers):
	// the response's own ETag must be the one asked for.
	if got := strings.Trim(resp.Header.Get("ETag"), `"`); etag != "" && got != "" && got != etag {
		resp.Body.Close()
		return nil, &Error{Status: http.StatusPreconditionFailed, Code: "PreconditionFailed",
			Message: "the store served version " + got + " for If-Match " + etag}
	}
	return resp, nil
}

// CopyThrough is Copy for a store that may ignore a copy's conditions on
// its destination (versitygw 1.8 does): an object of at most limit bytes
// is read, If-Match srcETag, and put under h, which stores check on a PUT;
// a larger one is copied by the store in parts (UploadPartCopy), h's
// conditions going with the upload's completion, which stores check too.
// Either way the copy keeps what a
// store's copy keeps of the object besides its bytes (kept, its user
// metadata, and its tags, read with Tagging, a request sent only for an
// object that has some: TagsError when it fails), and how it is stored,
// which a store's copy does not keep (ObjectInfo.Stored), but for what h
// sets. As with a store's copy, the source
// must still be srcETag, when set, once the copy exists: else the answer
// is ErrSourceChanged, so that a source another writer changed or
// removed meanwhile is never taken for the one copied. The copy is then
// left to the caller to undo: removed here, it could not be told from
// the object it replaced, nor put back.
func (c *Client) CopyThrough(ctx context.Context, src, srcETag, dst string, h http.Header, limit int64) (string, error) {
	o, through, err := c.copyThrough(ctx, src, srcETag, dst, h, limit)
	if err != nil || srcETag == "" || !through {
		return o.ETag, err
	}
	now, err := c.Head(ctx, src)
	switch code, _ := Code(err); {
	case err == nil && now.ETag == srcETag:
		return o.ETag, nil
	case err == nil, code == "NoSuchKey":
		return o.ETag, fmt.Errorf("%w: %s", ErrSourceChanged, src)
	}
	return o.ETag, err
}

// CopyAsRead is CopyThrough without its look at the source once the copy
// exists: the copy holds the source's bytes at srcETag (read, or copied
// in parts, If-Match it), but the source may have changed or gone since,
// which the caller checks itself when it needs to (a move, before it
// deletes the source If-Match srcETag). It returns the copy's ETag and
// size.
func (c *Client) CopyAsRead(ctx context.Context, src, srcETag, dst string, h http.Header, limit int64) (ObjectInfo, error) {
	o, _, err := c.copyThrough(ctx, src, srcETag, dst, h, limit)
	return o, err
}

// copyThrough makes the copy of CopyThrough; through says it was read
// and put by this process, not copied by the store in parts.
func (c *Client) copyThrough(ctx context.Context, src, srcETag, dst string, h http.Header, limit int64) (o ObjectInfo, through bool, err error) {
	resp, err := c.get(ctx, src, srcETag, 0, 0)
	if err != nil {
		return ObjectInfo{}, false, err
	}
	if h == nil {
		h = http.Header{}
	}
	for k, v := range resp.Header {
		switch k = http.CanonicalHeaderKey(k); {
		case h[k] != nil:
		case kept[k], strings.HasPrefix(k, "X-Amz-Meta-"):
			h[k] = v
		}
	}
	// How the source is stored, which a PUT, or an upload, sets anew: its
	// storage class and its encryption under a KMS key (a move dropped
	// them, and a rollback's restore from a backup), and its tags, read
	// by a request of their own only when it has some.
	was := info(src, resp.Header, resp.ContentLength)
	for k, v := range was.Stored {
		if h[k] == nil {
			h[k] = v
		}
	}
	// Read whole up to limit bytes; an answer of no stated length (a
	// chunked one) is read up to one byte past, to tell which it is.
	size := resp.ContentLength
	var data []byte
	if size <= limit {
		data, err = io.ReadAll(io.LimitReader(resp.Body, limit+min(1, math.MaxInt64-limit)))
	}
	resp.Body.Close()
	if err != nil {
		return ObjectInfo{}, false, err
	}
	if err := c.KeepTags(ctx, src, was.Tags, h); err != nil {
		return ObjectInfo{}, false, err
	}
	if size > limit || int64(len(data)) > limit {
		if size < 0 {
			o, err := c.Head(ctx, src) // its parts are sent If-Match srcETag
			if err != nil {
				return ObjectInfo{}, false, err
			}
			size = o.Size
		}
		// By the store, in parts: the conditions on dst go with the
		// upload's completion, which the store checks. The metadata is
		// the source's, as read If-Match srcETag, with h's.
		cond := http.Header{}
		for _, k := range []string{"If-Match", "If-None-Match"} {
			if v := h.Get(k); v != "" {
				cond.Set(k, v)
				h.Del(k)
			}
		}
		etag, err := c.copyParts(ctx, src, srcETag, dst, size, copyPartSize, h, cond)
		return ObjectInfo{Key: dst, ETag: etag, Size: size}, false, err
	}
	o, err = c.Put(ctx, dst, data, h)
	if err != nil {
		return ObjectInfo{}, true, &DestinationError{Err: err}
	}
	return o, true, nil
}

// DestinationError is CopyThrough's failure to write its destination, the
// source read whole: the error is the destination's, not the source's.
type DestinationError struct{ Err error }

func (e *DestinationError) Error() string { return e.Err.Error() }
func (e *DestinationError) Unwrap() error { return e.Err }

// TagsError is KeepTags' failure to read the tags of an object
// (GetObjectTagging), which its copy or a write over it would drop: Count
// is how many it has. Nothing was written.
type TagsError struct {
	Count int
	Err   error
}

func (e *TagsError) Error() string { return e.Err.Error() }
func (e *TagsError) Unwrap() error { return e.Err }

// ErrSourceChanged is CopyThrough's answer when the source changed or
// went while it was copied: the copy was made.
var ErrSourceChanged = errors.New("the source changed during its copy")

// kept are the headers of an object a copy keeps, beside X-Amz-Meta-*.
var kept = map[string]bool{"Content-Type": true, "Cache-Control": true, "Content-Disposition": true,
	"Content-Encoding": true, "Content-Language": true, "Expires": true}

// Put writes the object at key under the conditions of h.
func (c *Client) Put(ctx context.Context, key string, data []byte, h http.Header) (ObjectInfo, error) {
	resp, err := c.do(ctx, request{method: http.MethodPut, key: key, header: h, body: data})
	if err != nil {
		return ObjectInfo{}, err
	}
	resp.Body.Close()
	return info(key, resp.Header, int64(len(data))), nil
}

// KeepTags sets on h, the headers of a PUT that writes over or copies the
// object at key, the x-amz-tagging that keeps its n tags
// (ObjectInfo.Tags), read by a request of their own only when it has some
// and h sets none. A failure to read them is a *TagsError: written
// without them, the object would lose them.
func (c *Client) KeepTags(ctx context.Context, key string, n int, h http.Header) error {
	if n <= 0 || h["X-Amz-Tagging"] != nil {
		return nil
	}
	tags, err := c.Tagging(ctx, key)
	if err != nil {
		return &TagsError{Count: n, Err: err}
	}
	if tags != "" {
		h.Set("X-Amz-Tagging", tags)
	}
	return nil
}

// Tagging is the tag set of the object at key (GetObjectTagging) as the
// x-amz-tagging header of a PUT sets it again: URL-encoded KEY=VALUE
// pairs, joined by &; "" when it has none.
func (c *Client) Tagging(ctx context.Context, key string) (string, error) {
	resp, err := c.do(ctx, request{method: http.MethodGet, key: key, query: url.Values{"tagging": {""}}})
	if err != nil {
		return "", err
	}
	data, err := readAnswer(resp)
	if err != nil {
		return "", err
	}
	var t struct {
		Tags []struct{ Key, Value string } `xml:"TagSet>Tag"`
	}
	if err := xml.Unmarshal(data, &t); err != nil {
		return "", &Error{Status: resp.StatusCode, Code: CodeNotS3, Message: "the answer to GetObjectTagging is not a tag set: " + err.Error()}
	}
	pairs := make([]string, len(t.Tags))
	for i, tag := range t.Tags {
		// %20 for a space, which a header's query string decodes as
		// one, where + may stay a plus.
		pairs[i] = awsEscape(tag.Key, false) + "=" + awsEscape(tag.Value, false)
	}
	return strings.Join(pairs, "&"), nil
}

// Copy copies the object src, If-Match srcETag when set, to dst with the
// headers h (conditions on dst a store may ignore: versitygw 1.8 does, so
// that CopyThrough puts those), and returns the copy's ETag, which differs from the source's when that is a
// multipart upload's.
func (c *Client) Copy(ctx context.Context, src, srcETag, dst string, h http.Header) (string, error) {
	ch := c.copySource(src, srcETag)
	for k, v := range h {
		ch[k] = v
	}
	resp, err := c.do(ctx, request{method: http.MethodPut, key: dst, header: ch})
	if err != nil {
		return "", err
	}
	return answerETag(resp, "CopyObject")
}

// copySource is the headers that name a copy's source, If-Match srcETag
// when set.
func (c *Client) copySource(src, srcETag string) http.Header {
	h := http.Header{}
	h.Set("X-Amz-Copy-Source", "/"+c.bucket+"/"+awsEscape(src, true))
	if srcETag != "" {
		h.Set("X-Amz-Copy-Source-If-Match", `"`+srcETag+`"`)
	}
	return h
}

// readAnswer reads the body of a 2xx answer that may still be an error
// (CopyObject, CompleteMultipartUpload fail after their 200).
func readAnswer(resp *http.Response) ([]byte, error) {
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return nil, err
	}
	var e Error
	if xml.Unmarshal(data, &struct {
		XMLName xml.Name `xml:"Error"`
		*Error
	}{Error: &e}) == nil {
		e.Status = http.StatusInternalServerError
		return nil, &e
	}
	return data, nil
}

// Delete deletes the object at key, If-Match etag when set.
func (c *Client) Delete(ctx context.Context, key, etag string) error {
	resp, err := c.do(ctx, request{method: http.MethodDelete, key: key, header: Condition(etag, "")})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// DeleteBatch deletes up to 1,000 keys in one request, but for a key XML
// 1.0 cannot carry (a control byte, a byte that is not UTF-8: both legal
// in a key), which encoding/xml would send as U+FFFD, so that the store
// deleted another key, or none, and answered success: such a key is
// deleted by its own DELETE, whose URL carries any byte.
func (c *Client) DeleteBatch(ctx context.Context, keys []string) error {
	type object struct {
		Key string `xml:"Key"`
	}
	var objects []object
	for _, k := range keys {
		if !xmlText(k) {
			if err := c.Delete(ctx, k, ""); err != nil {
				if code, _ := Code(err); code != "NoSuchKey" {
					return err
				}
			}
			continue
		}
		objects = append(objects, object{k})
	}
	if len(objects) == 0 {
		return nil
	}
	body, err := xml.Marshal(struct {
		XMLName xml.Name `xml:"Delete"`
		Quiet   bool     `xml:"Quiet"`
		Objects []object `xml:"Object"`
	}{Quiet: true, Objects: objects})
	if err != nil {
		return err
	}
	sum := md5.Sum(body)
	h := http.Header{}
	h.Set("Content-MD5", base64.StdEncoding.EncodeToString(sum[:]))
	h.Set("Content-Type", "application/xml")
	resp, err := c.do(ctx, request{method: http.MethodPost, query: url.Values{"delete": {""}}, header: h, body: body})
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	var result struct {
		Errors []struct {
			Key     string `xml:"Key"`
			Code    string `xml:"Code"`
			Message string `xml:"Message"`
		} `xml:"Error"`
	}
	if err := xml.NewDecoder(resp.Body).Decode(&result); err != nil && err != io.EOF {
		return err
	}
	for _, e := range result.Errors {
		if e.Code != "NoSuchKey" {
			return &Error{Status: http.StatusInternalServerError, Code: e.Code, Message: e.Key + ": " + e.Message}
		}
	}
	return nil
}

// xmlText reports whether XML 1.0 can carry s as it is: UTF-8 of the
// characters it allows.
func xmlText(s string) bool {
	if !utf8.ValidString(s) {
		return false
	}
	for _, r := range s {
		if !(r == '\t' || r == '\n' || r == '\r' || 0x20 <= r && r <= 0xD7FF || 0xE000 <= r && r <= 0xFFFD || r >= 0x10000) {
			return false
		}
	}
	return true
}

// firstListPage is the size of a listing's first page: a page of ls or
// find (200 entries) and a few more.
const firstListPage = 256

// List yields the keys below prefix (after startAfter, when set) in key
// order, a page (ListObjectsV2) fetched when the one before is used up,
// and, with a delimiter, the common prefixes among them; at most max when
// max > 0.
func (c *Client) List(ctx context.Context, prefix, delimiter string, max int, startAfter string) iter.Seq2[ObjectInfo, error] {
	return func(yield func(ObjectInfo, error) bool) {
		// The first page is short, so that a first page of ls or find
		// costs the same in a directory of any size; the next are full.
		token, n, size := "", 0, firstListPage
		for {
			q := url.Values{"list-type": {"2"}, "prefix": {prefix}, "encoding-type": {"url"}}
			if delimiter != "" {
				q.Set("delimiter", delimiter)
			}
			if max > 0 {
				size = min(size, max-n)
			}
			q.Set("max-keys", strconv.Itoa(size))
			size = 1000
			if token != "" {
				q.Set("continuation-token", token)
			} else if startAfter != "" {
				q.Set("start-after", startAfter)
			}
			resp, err := c.do(ctx, request{method: http.MethodGet, query: q})
			if err != nil {
				yield(ObjectInfo{}, err)
				return
			}
			var page struct {
				Contents []struct {
					Key          string `xml:"Key"`
					Size         int64  `xml:"Size"`
					ETag         string `xml:"ETag"`
					LastModified string `xml:"LastModified"`
				} `xml:"Contents"`
				CommonPrefixes []struct {
					Prefix string `xml:"Prefix"`
				} `xml:"CommonPrefixes"`
				EncodingType          string `xml:"EncodingType"`
				IsTruncated           bool   `xml:"IsTruncated"`
				NextContinuationToken string `xml:"NextContinuationToken"`
			}
			err = xml.NewDecoder(resp.Body).Decode(&page)
			resp.Body.Close()
			if err != nil {
				yield(ObjectInfo{}, err)
				return
			}
			// Keys come escaped only when the store says so (not every
			// store honours encoding-type).
			unescape := func(k string) (string, error) {
				if page.EncodingType != "url" {
					return k, nil
				}
				return url.QueryUnescape(k)
			}
			// Keys and prefixes come apart; together they are in key order.
			var infos []ObjectInfo
			for _, o := range page.Contents {
				key, err := unescape(o.Key)
				if err != nil {
					yield(ObjectInfo{}, err)
					return
				}
				mod, _ := time.Parse(time.RFC3339Nano, o.LastModified)
				infos = append(infos, ObjectInfo{Key: key, Size: o.Size, ETag: strings.Trim(o.ETag, `"`), LastModified: mod.UTC(),
					Mangled: page.EncodingType != "url" && strings.ContainsRune(key, utf8.RuneError)})
			}
			for _, p := range page.CommonPrefixes {
				key, err := unescape(p.Prefix)
				if err != nil {
					yield(ObjectInfo{}, err)
					return
				}
				infos = append(infos, ObjectInfo{Key: key, Mangled: page.EncodingType != "url" && strings.ContainsRune(key, utf8.RuneError)})
			}
			sort.Slice(infos, func(i, j int) bool { return infos[i].Key < infos[j].Key })
			for _, o := range infos {
				if rest, ok := strings.CutPrefix(o.Key, xmlMangled(prefix)); ok && o.Mangled && !strings.HasPrefix(o.Key, prefix) {
					// A store that ignores encoding-type=url mangles the
					// prefix's bytes XML cannot carry (d\x01x/ listed as
					// d\uFFFDx/f) as it mangles the rest: the key starts
					// with the prefix asked, which the listing was IO_ERROR
					// for, and before that cut at the prefix's length.
					o.Key, o.Mangled = prefix+rest, strings.ContainsRune(rest, utf8.RuneError)
				}
				if !strings.HasPrefix(o.Key, prefix) {
					// A store that ignored the prefix (a broken gateway):
					// the key is no entry of what was listed, and a
					// recursive removal would delete it.
					yield(ObjectInfo{}, &Error{Status: http.StatusOK, Code: CodeNotS3,
						Message: fmt.Sprintf("the listing of %q held the key %q, outside that prefix", prefix, o.Key)})
					return
				}
				n++
				if !yield(o, nil) || max > 0 && n >= max {
					return
				}
			}
			if !page.IsTruncated || page.NextContinuationToken == "" {
				return
			}
			token = page.NextContinuationToken
		}
	}
}

// xmlMangled is s as a store that ignores encoding-type=url lists it
// (encoding/xml's escaping): U+FFFD for each byte that is no UTF-8 and
// each character XML cannot carry (a control byte).
func xmlMangled(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == 0x09, r == 0x0A, r == 0x0D, r >= 0x20 && r <= 0xD7FF, r >= 0xE000 && r < utf8.RuneError, r >= 0x10000 && r <= 0x10FFFF:
			b.WriteRune(r)
		default:
			b.WriteRune(utf8.RuneError)
		}
	}
	return b.String()
}

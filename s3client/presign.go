package s3client

import (
	"fmt"
	"net/url"
	"strconv"
	"time"
)

// MaxPresignExpiry is the longest a presigned URL may be valid (SigV4).
const MaxPresignExpiry = 7 * 24 * time.Hour

// PresignGet is a URL that GETs the object at key without credentials
// until expires (whole seconds, 1 s to 7 days) has passed; params
// (response-content-disposition, response-content-type) go in its query,
// signed, and the store answers with them.
func (c *Client) PresignGet(key string, expires time.Duration, params url.Values) (string, error) {
	return c.PresignGetAt(key, expires, params, time.Now().UTC())
}

// PresignGetAt is PresignGet signed at now (UTC), which the link's
// lifetime counts from, in whole seconds.
func (c *Client) PresignGetAt(key string, expires time.Duration, params url.Values, now time.Time) (string, error) {
	if expires < time.Second || expires > MaxPresignExpiry {
		return "", fmt.Errorf("a presigned URL lasts 1 s to 7 days, not %v", expires)
	}
	q := url.Values{}
	for k, vs := range params {
		q[k] = vs
	}
	q.Set("X-Amz-Algorithm", "AWS4-HMAC-SHA256")
	q.Set("X-Amz-Credential", c.cr.AccessKey+"/"+c.scope(now.Format("20060102")))
	q.Set("X-Amz-Date", now.Format("20060102T150405Z"))
	q.Set("X-Amz-Expires", strconv.FormatInt(int64(expires/time.Second), 10))
	q.Set("X-Amz-SignedHeaders", "host")
	if c.cr.SessionToken != "" {
		q.Set("X-Amz-Security-Token", c.cr.SessionToken)
	}
	host, path := c.target(key)
	rawQuery := canonicalQuery(q)
	// The body of a presigned GET is unknown when it is signed.
	canon := "GET\n" + path + "\n" + rawQuery + "\nhost:" + host + "\n\nhost\nUNSIGNED-PAYLOAD"
	return c.scheme + "://" + host + path + "?" + rawQuery + "&X-Amz-Signature=" + c.signature(now, canon), nil
}

package s3client

import (
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPresignKnownAnswer signs AWS's own example of a presigned GET
// (docs.aws.amazon.com/AmazonS3/latest/API/sigv4-query-string-auth.html)
// and gets its signature.
func TestPresignKnownAnswer(t *testing.T) {
	c := &Client{scheme: "https", host: "s3.amazonaws.com", bucket: "examplebucket", region: "us-east-1",
		cr: Credentials{AccessKey: "AKIAIOSFODNN7EXAMPLE", SecretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}}
	link, err := c.PresignGetAt("test.txt", 24*time.Hour, nil, time.Date(2013, 5, 24, 0, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := "https://examplebucket.s3.amazonaws.com/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256" +
		"&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request" +
		"&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host" +
		"&X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404"
	if link != want {
		t.Errorf("got  %s\nwant %s", link, want)
	}
}

func TestPresignExpiryBounds(t *testing.T) {
	c := &Client{scheme: "https", host: "h", bucket: "b", region: "us-east-1", cr: Credentials{AccessKey: "a", SecretKey: "s"}}
	for _, tc := range []struct {
		expires time.Duration
		ok      bool
	}{
		{time.Second, true},
		{MaxPresignExpiry, true},
		{time.Second - 1, false},
		{0, false},
		{MaxPresignExpiry + time.Second, false},
	} {
		link, err := c.PresignGet("k", tc.expires, url.Values{"response-content-type": {"text/csv"}})
		if (err == nil) != tc.ok {
			t.Errorf("%v: %v, want ok %v", tc.expires, err, tc.ok)
		}
		if err == nil && !strings.Contains(link, "response-content-type=text%2Fcsv") {
			t.Errorf("%v: %s lacks its params", tc.expires, link)
		}
	}
}

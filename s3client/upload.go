package s3client

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// maxParts is the most parts S3 takes in one upload.
const maxParts = 10000

// Upload writes size bytes of r to key, with h (Content-Type, X-Amz-Meta-*)
// as the object's headers: in one PUT up to partSize bytes, else in parts
// of partSize (larger when size needs more than 10,000), so that memory
// holds one part. A failure of r or of the store aborts a multipart
// upload, so no object and no part is left; r's error is returned as it
// is, wrapped. ctx ends the upload between two requests, never during one
// (see whole).
func (c *Client) Upload(ctx context.Context, key string, r io.Reader, size, partSize int64, h http.Header) (ObjectInfo, error) {
	if size <= partSize {
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return ObjectInfo{}, fmt.Errorf("read the content: %w", err)
		}
		if err := ctx.Err(); err != nil {
			return ObjectInfo{}, err
		}
		return c.Put(context.WithoutCancel(ctx), key, data, h)
	}
	partSize = partSizeFor(size, partSize)
	etag, err := c.multipart(ctx, key, h, nil, func(id string) ([]completedPart, error) {
		return c.uploadParts(ctx, key, id, r, size, partSize)
	})
	return ObjectInfo{Key: key, Size: size, ETag: etag}, err
}

// multipart makes an object at key by a multipart upload: created with the
// object's headers h, its parts sent by parts, completed under cond's
// conditions on key, which the store checks as it completes (versitygw
// 1.8 too, where it ignores a CopyObject's). A failure aborts the upload,
// so no object and no part is left; it returns the object's ETag. Its
// requests are sent by whole.
func (c *Client) multipart(ctx context.Context, key string, h, cond http.Header, parts func(id string) ([]completedPart, error)) (string, error) {
	id, err := c.createMultipart(ctx, key, h)
	if err != nil {
		return "", err
	}
	ps, err := parts(id)
	var etag string
	if err == nil {
		etag, err = c.complete(ctx, key, id, ps, cond)
	}
	if err != nil {
		// The caller's context may be the cause: the abort gets its own.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		made := false
		if ps != nil && AnswerLost(err) {
			// The store may have completed it, and the abort would then
			// find no upload: the object its parts make says so.
			want := multipartETag(ps)
			o, herr := c.Head(actx, key)
			if _, status := Code(herr); herr == nil && o.ETag == want {
				// Made, by this completion or by another upload of the
				// same bytes (a publish of the same file has the same
				// key): this one, if it never completed, is aborted all
				// the same, or it stayed open and billed.
				made, etag = true, want
			} else if herr != nil && status != http.StatusNotFound {
				err = fmt.Errorf("%w (its answer was lost, and whether the store made %s is unknown: %v)", err, key, herr)
			}
		}
		if aerr := c.abortMultipart(actx, key, id); aerr != nil {
			return "", &LeftError{Err: err, Abort: aerr, Bucket: c.bucket, Key: key, UploadID: id}
		}
		if !made {
			return "", err
		}
	}
	return etag, nil
}

// multipartETag is the ETag S3 gives the object that parts make: the MD5
// of their MD5s, then a dash and their count.
func multipartETag(parts []completedPart) string {
	m := md5.New()
	for _, p := range parts {
		sum, _ := hex.DecodeString(strings.Trim(p.ETag, `"`))
		m.Write(sum)
	}
	return fmt.Sprintf("%x-%d", m.Sum(nil), len(parts))
}

// whole sends r, a request of an upload, unless ctx is done, and then
// waits for its answer whatever ctx: the store makes a request cut off
// all the same, after the abort that follows (versitygw links a part into
// an upload aborted meanwhile), so that interrupted publishes left parts
// of aborted uploads, billed and not even listed, or the whole object
// while they answered that nothing was left. A request that stalls still
// fails (the idle timeout).
func (c *Client) whole(ctx context.Context, r request) (*http.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return c.do(context.WithoutCancel(ctx), r)
}

// LeftError is the failure of a multipart upload whose abort failed too:
// the upload is left in the bucket, its parts billed, until it is aborted.
type LeftError struct {
	Err                   error // the upload's failure
	Abort                 error // the abort's
	Bucket, Key, UploadID string
}

func (e *LeftError) Error() string {
	return fmt.Sprintf("%v (and the upload %s of %s is left with its parts: aborting it failed: %v)", e.Err, e.UploadID, e.Key, e.Abort)
}

func (e *LeftError) Unwrap() error { return e.Err }

// AbortCommand is the AWS CLI's command that aborts the upload left, its
// words quoted for a POSIX shell.
func (e *LeftError) AbortCommand() string {
	return fmt.Sprintf("aws s3api abort-multipart-upload --bucket %s --key %s --upload-id %s", shellQuote(e.Bucket), shellQuote(e.Key), shellQuote(e.UploadID))
}

// shellQuote is s as one word of a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// partSizeFor is the size of the parts of an upload of size bytes: at
// least partSize, and large enough for size to fit in maxParts.
func partSizeFor(size, partSize int64) int64 {
	return max(partSize, (size+maxParts-1)/maxParts)
}

// completedPart is one part of a CompleteMultipartUpload request.
type completedPart struct {
	PartNumber int    `xml:"PartNumber"`
	ETag       string `xml:"ETag"`
}

// uploadParts sends size bytes of r in parts of upload id.
func (c *Client) uploadParts(ctx context.Context, key, id string, r io.Reader, size, partSize int64) ([]completedPart, error) {
	var parts []completedPart
	buf := make([]byte, partSize)
	for sent := int64(0); sent < size; {
		data := buf[:min(partSize, size-sent)]
		if _, err := io.ReadFull(r, data); err != nil {
			return nil, fmt.Errorf("read the content: %w", err)
		}
		n := len(parts) + 1
		resp, err := c.whole(ctx, request{method: http.MethodPut, key: key, query: partQuery(n, id), body: data})
		if err != nil {
			return nil, err
		}
		resp.Body.Close()
		parts = append(parts, completedPart{PartNumber: n, ETag: resp.Header.Get("ETag")})
		sent += int64(len(data))
	}
	return parts, nil
}

// copyParts copies size bytes of src, If-Match srcETag, to dst by the
// store, a part a request (UploadPartCopy), in an upload made with the
// object's headers h and completed under cond's conditions on dst.
func (c *Client) copyParts(ctx context.Context, src, srcETag, dst string, size, partSize int64, h, cond http.Header) (string, error) {
	partSize = partSizeFor(size, partSize)
	return c.multipart(ctx, dst, h, cond, func(id string) ([]completedPart, error) {
		var parts []completedPart
		for off := int64(0); off < size; off += partSize {
			ph := c.copySource(src, srcETag)
			ph.Set("X-Amz-Copy-Source-Range", fmt.Sprintf("bytes=%d-%d", off, min(off+partSize, size)-1))
			n := len(parts) + 1
			resp, err := c.whole(ctx, request{method: http.MethodPut, key: dst, query: partQuery(n, id), header: ph})
			if err != nil {
				return nil, err
			}
			etag, err := answerETag(resp, "UploadPartCopy")
			if err != nil {
				return nil, err
			}
			parts = append(parts, completedPart{PartNumber: n, ETag: etag})
		}
		return parts, nil
	})
}

// copyPartSize is the least part of a copy by parts: the store copies the
// bytes, so that larger parts only spare requests.
const copyPartSize = 512 << 20

func partQuery(n int, id string) url.Values {
	return url.Values{"partNumber": {strconv.Itoa(n)}, "uploadId": {id}}
}

// complete completes upload id of key with parts, under cond's conditions.
func (c *Client) complete(ctx context.Context, key, id string, parts []completedPart, cond http.Header) (string, error) {
	body, err := xml.Marshal(struct {
		XMLName xml.Name        `xml:"CompleteMultipartUpload"`
		Parts   []completedPart `xml:"Part"`
	}{Parts: parts})
	if err != nil {
		return "", err
	}
	h := cond.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/xml")
	resp, err := c.whole(ctx, request{method: http.MethodPost, key: key, query: url.Values{"uploadId": {id}}, header: h, body: body})
	if err != nil {
		return "", err
	}
	return answerETag(resp, "CompleteMultipartUpload")
}

// answerETag is the ETag in the XML answer of a request (CopyObject,
// UploadPartCopy, CompleteMultipartUpload), which can fail after its 200:
// the body is then an error.
func answerETag(resp *http.Response, what string) (string, error) {
	data, err := readAnswer(resp)
	if err != nil {
		return "", err
	}
	var result struct {
		ETag string `xml:"ETag"`
	}
	if err := xml.Unmarshal(data, &result); err != nil {
		return "", fmt.Errorf("the answer to %s: %w", what, err)
	}
	return strings.Trim(result.ETag, `"`), nil
}

// createMultipart starts an upload to key with the object's headers h and
// returns its id.
func (c *Client) createMultipart(ctx context.Context, key string, h http.Header) (string, error) {
	resp, err := c.whole(ctx, request{method: http.MethodPost, key: key, query: url.Values{"uploads": {""}}, header: h})
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var result struct {
		UploadID string `xml:"UploadId"`
	}
	if err := xml.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&result); err != nil || result.UploadID == "" {
		return "", fmt.Errorf("the answer to CreateMultipartUpload has no upload id (%v)", err)
	}
	return result.UploadID, nil
}

// abortMultipart drops upload id and the parts it has. A part the store
// was still taking in when the abort came (its request cut off by a
// signal) can keep the upload, a part and all, as AWS warns: the abort is
// checked with a listing of the upload's parts, and made again until the
// upload is gone, up to abortTries times.
func (c *Client) abortMultipart(ctx context.Context, key, id string) error {
	q := url.Values{"uploadId": {id}}
	for try := 1; ; try++ {
		resp, err := c.do(ctx, request{method: http.MethodDelete, key: key, query: q})
		if err != nil {
			if code, _ := Code(err); code == "NoSuchUpload" {
				return nil
			}
			return err
		}
		resp.Body.Close()
		resp, err = c.do(ctx, request{method: http.MethodGet, key: key, query: q})
		if err != nil {
			// Gone (NoSuchUpload, a 404), or a check the credentials may
			// not make (ListParts refused): the abort was answered, and
			// only a listing that shows the upload calls for another.
			return nil
		}
		resp.Body.Close()
		if try == abortTries {
			return fmt.Errorf("it is still there after %d aborts", try)
		}
		pause := time.NewTimer(time.Duration(try) * 200 * time.Millisecond)
		select {
		case <-ctx.Done():
			pause.Stop()
			return ctx.Err()
		case <-pause.C:
		}
	}
}

// abortTries bounds the aborts of one upload.
const abortTries = 5

package s3client

import (
	"context"
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
// is, wrapped.
func (c *Client) Upload(ctx context.Context, key string, r io.Reader, size, partSize int64, h http.Header) (ObjectInfo, error) {
	if size <= partSize {
		data := make([]byte, size)
		if _, err := io.ReadFull(r, data); err != nil {
			return ObjectInfo{}, fmt.Errorf("read the content: %w", err)
		}
		return c.Put(ctx, key, data, h)
	}
	partSize = partSizeFor(size, partSize)
	id, err := c.createMultipart(ctx, key, h)
	if err != nil {
		return ObjectInfo{}, err
	}
	o, err := c.uploadParts(ctx, key, id, r, size, partSize)
	if err != nil {
		// The caller's context may be the cause: the abort gets its own.
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		if aerr := c.abortMultipart(actx, key, id); aerr != nil {
			return ObjectInfo{}, fmt.Errorf("%w (and its parts are left: aborting the upload failed: %v)", err, aerr)
		}
		return ObjectInfo{}, err
	}
	return o, nil
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

// uploadParts sends size bytes of r in parts of upload id and completes it.
func (c *Client) uploadParts(ctx context.Context, key, id string, r io.Reader, size, partSize int64) (ObjectInfo, error) {
	var parts []completedPart
	buf := make([]byte, partSize)
	for sent := int64(0); sent < size; {
		data := buf[:min(partSize, size-sent)]
		if _, err := io.ReadFull(r, data); err != nil {
			return ObjectInfo{}, fmt.Errorf("read the content: %w", err)
		}
		n := len(parts) + 1
		q := url.Values{"partNumber": {strconv.Itoa(n)}, "uploadId": {id}}
		resp, err := c.do(ctx, request{method: http.MethodPut, key: key, query: q, body: data})
		if err != nil {
			return ObjectInfo{}, err
		}
		resp.Body.Close()
		parts = append(parts, completedPart{PartNumber: n, ETag: resp.Header.Get("ETag")})
		sent += int64(len(data))
	}
	body, err := xml.Marshal(struct {
		XMLName xml.Name        `xml:"CompleteMultipartUpload"`
		Parts   []completedPart `xml:"Part"`
	}{Parts: parts})
	if err != nil {
		return ObjectInfo{}, err
	}
	h := http.Header{}
	h.Set("Content-Type", "application/xml")
	resp, err := c.do(ctx, request{method: http.MethodPost, key: key, query: url.Values{"uploadId": {id}}, header: h, body: body})
	if err != nil {
		return ObjectInfo{}, err
	}
	data, err := readAnswer(resp)
	if err != nil {
		return ObjectInfo{}, err
	}
	var result struct {
		ETag string `xml:"ETag"`
	}
	if err := xml.Unmarshal(data, &result); err != nil {
		return ObjectInfo{}, fmt.Errorf("the answer to CompleteMultipartUpload: %w", err)
	}
	return ObjectInfo{Key: key, Size: size, ETag: strings.Trim(result.ETag, `"`)}, nil
}

// createMultipart starts an upload to key with the object's headers h and
// returns its id.
func (c *Client) createMultipart(ctx context.Context, key string, h http.Header) (string, error) {
	resp, err := c.do(ctx, request{method: http.MethodPost, key: key, query: url.Values{"uploads": {""}}, header: h})
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

// abortMultipart drops upload id and the parts it has.
func (c *Client) abortMultipart(ctx context.Context, key, id string) error {
	resp, err := c.do(ctx, request{method: http.MethodDelete, key: key, query: url.Values{"uploadId": {id}}})
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

package s3fs_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentfs/agentfs/core"
	"github.com/agentfs/agentfs/fault"
)

// late answers the first PUT to log with a 504 at once, as a gateway whose
// wait for the store ran out does, and sends that PUT on to the store a
// moment later: the store makes it after the write has looked.
type late struct {
	once sync.Once
	wg   sync.WaitGroup
}

func (l *late) RoundTrip(r *http.Request) (*http.Response, error) {
	lose := false
	if r.Method == http.MethodPut && putTo("lostlate", "log")(r) {
		l.once.Do(func() { lose = true })
	}
	if !lose {
		return http.DefaultTransport.RoundTrip(r)
	}
	body, _ := io.ReadAll(r.Body)
	r.Body.Close()
	r2 := r.Clone(context.Background())
	r2.Body = io.NopCloser(bytes.NewReader(body))
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		time.Sleep(300 * time.Millisecond)
		if resp, err := http.DefaultTransport.RoundTrip(r2); err == nil {
			resp.Body.Close()
		}
	}()
	return s3Answer(r, http.StatusGatewayTimeout, "GatewayTimeout", "The gateway timed out."), nil
}

// A write whose answer a gateway lost (504) while the store still makes
// it is not proven unmade by a look at the object: it said "nothing was
// changed", which the store then belied, and a retried append was made
// twice. Sent again under its condition, it is made once.
func TestLostAnswerOfAWriteStillOnItsWay(t *testing.T) {
	ctx := context.Background()
	f, _, root := seeded(t, "lostlate", map[string]string{"log": "entry 1\n"})
	l := &late{}
	tools := &core.Tools{FS: transportFS(t, root, l), LockTimeout: 200 * time.Millisecond}
	_, err := tools.Write(ctx, core.WriteRequest{Path: "log", Content: new("entry 2\n"), Append: true})
	l.wg.Wait()
	got := tree(t, f, "log")["log"]
	if e := fault.AsError(err); e != nil {
		if strings.Contains(e.Hint, "nothing was changed") && got != "entry 1\n" {
			t.Errorf("%v: the write said nothing was changed, and log holds %q", err, got)
		}
	} else if got != "entry 1\nentry 2\n" {
		t.Errorf("the write succeeded, and log holds %q", got)
	}
}

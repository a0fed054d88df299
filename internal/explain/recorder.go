package explain

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
)

// ErrWait is what a wait returns under Explain: the call stops there instead of
// waiting. Explain does not report it as an error.
var ErrWait = errors.New("singletable: Explain: the call would wait here and try again; Explain stops at the first wait")

// Recorder collects one Explain's requests and notes. Its methods are safe for
// concurrent use; after Finish it records nothing more.
type Recorder struct {
	// Rand is the random source of the plans of the calls recorded (receipts,
	// incarnation ids, transaction tokens): a stream fixed per Explain, so that
	// the same calls explain the same, byte for byte. Safe for concurrent use.
	Rand  io.Reader
	mu    sync.Mutex // protects reqs, notes, done and json
	reqs  []Request
	notes []string
	done  bool
	json  JSON // writes inputs' JSON
}

// Add records the request of one call (api, with input in) to the client of the
// table s describes, made for entity ("" for none).
func (r *Recorder) Add(ctx context.Context, s *Schema, entity, api string, in any) {
	req := Describe(s, entity, api, in)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.done {
		return
	}
	req.Input, req.InputErr = r.json.Input(ctx, api, in)
	r.reqs = append(r.reqs, req)
}

// Wait notes that the call would wait (and try again) after the last request,
// and returns ErrWait.
func (r *Recorder) Wait() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.done {
		r.notes = append(r.notes, fmt.Sprintf("after request %d: the call would wait (backoff) and try again; Explain shows its first attempt", len(r.reqs)))
	}
	return ErrWait
}

// Finish ends the recording and returns what was recorded.
func (r *Recorder) Finish() ([]Request, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.done = true
	return r.reqs, r.notes
}

package admin

import (
	"context"
	"fmt"
	"io"
	"math"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/schollz/progressbar/v3"
)

// progress shows a long operation's progress on the error stream: a bar
// (github.com/schollz/progressbar) with the count, the rate, the detail
// (capacity used) and the time left when the stream is a terminal; otherwise a
// plain line at most once a second, and one at the end.
type progress struct {
	mu    sync.Mutex
	bar   *progressbar.ProgressBar // nil: plain lines
	w     io.Writer
	name  string
	unit  string
	max   int64 // 0 when unknown
	base  int64 // done before this run (a resumed migration's): not in the rate
	start time.Time
	last  time.Time
	every time.Duration
	done  bool
}

// newProgress starts the progress of name, max units (0 when unknown).
func (c *cli) newProgress(name string, max int64, unit string) *progress {
	p := &progress{w: c.io.Err, name: name, unit: unit, max: max, start: time.Now(), every: time.Second}
	if isTerminal(c.io.Err) {
		n := max
		if n <= 0 {
			n = -1 // a spinner
		}
		opts := []progressbar.Option{
			progressbar.OptionSetWriter(c.io.Err),
			progressbar.OptionSetDescription(name),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionShowDescriptionAtLineEnd(),
			progressbar.OptionThrottle(100 * time.Millisecond),
			progressbar.OptionSetRenderBlankState(true),
			progressbar.OptionSetWidth(30),
		}
		if unit != "" { // "": time only (a spinner)
			opts = append(opts, progressbar.OptionShowCount(), progressbar.OptionShowIts(), progressbar.OptionSetItsString(unit))
		}
		p.bar = progressbar.NewOptions64(n, opts...)
	}
	return p
}

// set moves the progress to done units, with a detail ("120 migrated, ~12.5
// RCU").
func (p *progress) set(done int64, detail string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	if p.bar != nil {
		if p.max > 0 && done > p.max { // the table's size is DescribeTable's estimate
			p.max = done
			p.bar.ChangeMax64(done)
		}
		p.bar.Describe(p.name + ": " + detail)
		_ = p.bar.Set64(done)
		return
	}
	now := time.Now()
	if now.Sub(p.last) < p.every {
		return
	}
	p.last = now
	fmt.Fprintln(p.w, p.line(done, detail, now))
}

// finish shows the last state and ends the bar.
func (p *progress) finish(done int64, detail string) { p.end(done, detail, "done") }

// stop shows the last state of an operation that stopped before its end.
func (p *progress) stop(done int64, detail string) { p.end(done, detail, "stopped") }

func (p *progress) end(done int64, detail, word string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	p.done = true
	if p.bar != nil {
		if p.max > 0 && done > p.max {
			p.bar.ChangeMax64(done)
		}
		p.bar.Describe(p.name + ": " + detail)
		_ = p.bar.Set64(done)
		_ = p.bar.Exit()
		fmt.Fprintln(p.w)
		return
	}
	fmt.Fprintln(p.w, p.line(done, detail, time.Now())+" ("+word+")")
}

// line is a plain progress line: "migrate Order: 500/1000 items (50%), 120
// migrated ~62.5 RCU, 410 items/s, ETA 1s".
func (p *progress) line(done int64, detail string, now time.Time) string {
	elapsed := now.Sub(p.start)
	rate := 0.0
	if elapsed > 0 {
		rate = float64(done-p.base) / elapsed.Seconds()
	}
	if p.unit == "" {
		return fmt.Sprintf("%s: %s, elapsed %s", p.name, detail, elapsed.Round(time.Second))
	}
	s := fmt.Sprintf("%s: %d", p.name, done)
	if p.max > 0 {
		pct := math.Min(100, 100*float64(done)/float64(p.max))
		s += fmt.Sprintf("/%d %s (%.0f%%)", p.max, p.unit, pct)
	} else {
		s += " " + p.unit
	}
	if detail != "" {
		s += ", " + detail
	}
	s += fmt.Sprintf(", %.0f %s/s, elapsed %s", rate, p.unit, elapsed.Round(time.Second))
	if p.max > done && rate > 0 {
		eta := time.Duration(float64(p.max-done) / rate * float64(time.Second))
		s += ", ETA " + eta.Round(time.Second).String()
	}
	return s
}

// size is the table's size as DescribeTable reports it (DynamoDB updates it
// about every six hours).
type size struct {
	items, bytes int64
}

// avgItem is the average item's size in bytes (1 KB when unknown).
func (s size) avgItem() float64 {
	if s.items <= 0 || s.bytes <= 0 {
		return 1024
	}
	return float64(s.bytes) / float64(s.items)
}

// readUnits estimates the RCU of an eventually consistent scan of n items.
func (s size) readUnits(n int64) float64 {
	return math.Ceil(float64(n)*s.avgItem()/4096) * 0.5
}

// writeUnits estimates the WCU of n writes of an average item.
func (s size) writeUnits(n int64) float64 {
	return float64(n) * math.Ceil(s.avgItem()/1024)
}

// tableSize asks DescribeTable for the table's size.
func (c *cli) tableSize(ctx context.Context) (size, error) {
	out, err := c.t.Client().DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: ptr(c.t.Name())})
	if err != nil {
		return size{}, err
	}
	var s size
	if out.Table != nil {
		if out.Table.ItemCount != nil {
			s.items = *out.Table.ItemCount
		}
		if out.Table.TableSizeBytes != nil {
			s.bytes = *out.Table.TableSizeBytes
		}
	}
	return s, nil
}

func ptr[T any](v T) *T { return &v }

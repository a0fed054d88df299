package singletable

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/singletable/singletable/internal/localtest"
)

// Reliability: DynamoDB Local killed and restarted. The index of the reliability tests, and their
// shared harness, are in reliability_test.go.

// localProcess is a DynamoDB Local this test runs itself, with java, on disk
// (-dbPath), so that it can be killed with SIGKILL and started again on the
// same port with the same data: what a crash and a supervisor's restart do.
type localProcess struct {
	java, jarDir, dbDir string
	port                int

	cmd    *exec.Cmd
	out    *bytes.Buffer
	exited chan struct{}
}

func (p *localProcess) start(ctx context.Context, probe *dynamodb.Client) error {
	for attempt := 1; ; attempt++ {
		p.out = &bytes.Buffer{}
		p.cmd = exec.Command(p.java, "-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar",
			"-sharedDb", "-dbPath", p.dbDir, "-port", strconv.Itoa(p.port))
		p.cmd.Dir = p.jarDir
		p.cmd.Stdout, p.cmd.Stderr = p.out, p.out
		p.cmd.WaitDelay = 5 * time.Second
		if err := p.cmd.Start(); err != nil {
			return err
		}
		p.exited = make(chan struct{})
		go func(cmd *exec.Cmd, exited chan struct{}) {
			_ = cmd.Wait()
			close(exited)
		}(p.cmd, p.exited)
		err := p.waitReady(ctx, probe)
		if err == nil {
			return nil
		}
		p.kill()
		if attempt == 5 || ctx.Err() != nil {
			return fmt.Errorf("%w; java said: %s", err, p.out.String())
		}
		time.Sleep(200 * time.Millisecond) // the port may still be held
	}
}

func (p *localProcess) waitReady(ctx context.Context, probe *dynamodb.Client) error {
	for {
		attempt, cancel := context.WithTimeout(ctx, time.Second)
		_, err := probe.ListTables(attempt, &dynamodb.ListTablesInput{Limit: aws.Int32(1)})
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			return errors.New("java exited")
		case <-ctx.Done():
			return fmt.Errorf("not ready: %w", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// kill kills the process with SIGKILL and waits for it.
func (p *localProcess) kill() {
	if p.cmd == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// killableLocal prepares a DynamoDB Local of its own, from the jar of the release
// the suite runs on (localtest.Jar: DYNAMODB_LOCAL_DIR, which `make test` exports),
// skipping the test (failing it under CI) when java or the jar cannot be had.
func killableLocal(t *testing.T) (*localProcess, string) {
	t.Helper()
	java, dir := localtest.Jar(t, nil)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	return &localProcess{java: java, jarDir: dir, dbDir: t.TempDir(), port: port}, "http://127.0.0.1:" + strconv.Itoa(port)
}

// TestKillAndRestartDynamoDBLocal kills DynamoDB Local (SIGKILL) under load and
// starts it again on the same port and data. During the outage operations fail
// with clean errors and nothing panics or hangs; after the restart the same
// Table and Entities, never recreated, work again within a second; reading
// everything back finds every acknowledged write once.
func TestKillAndRestartDynamoDBLocal(t *testing.T) {
	proc, endpoint := killableLocal(t)
	tr := &http.Transport{
		DialContext:           (&net.Dialer{Timeout: time.Second}).DialContext,
		MaxIdleConnsPerHost:   64,
		ResponseHeaderTimeout: 5 * time.Second,
	}
	defer tr.CloseIdleConnections()
	client := dynamodb.New(dynamodb.Options{
		Region:                          "us-east-1",
		BaseEndpoint:                    aws.String(endpoint),
		Credentials:                     credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:                      &http.Client{Transport: tr},
		DisableValidateResponseChecksum: true,
		Retryer: retry.NewStandard(func(so *retry.StandardOptions) {
			so.MaxAttempts = relSDKAttempts
			so.Backoff = retry.NewExponentialJitterBackoff(20 * time.Millisecond)
			so.MaxBackoff = 20 * time.Millisecond
			so.RateLimiter = ratelimit.None
		}),
	})
	probe := dynamodb.New(dynamodb.Options{
		Region: "us-east-1", BaseEndpoint: aws.String(endpoint), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider("dynamolocal", "dynamolocal", ""),
		HTTPClient:  &http.Client{Transport: tr},
	})
	ctx := context.Background()
	// Each start gets its own budget: DynamoDB Local 3.x takes several times as long
	// as 1.11.478 to answer (5 s idle, nearly a minute on a loaded two-core machine).
	startCtx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	require.NoError(t, proc.start(startCtx, probe))
	defer proc.kill()

	tbl, err := NewTable(client, "killed", testTableOptions, WithBackoff(Backoff{Base: 5 * time.Millisecond, Cap: 50 * time.Millisecond, MaxAttempts: 4}))
	require.NoError(t, err)
	require.NoError(t, tbl.CreateTable(ctx))
	items := MustRegister[relItem](tbl)
	counters := MustRegister[vCounter](tbl)
	led := newLedger()
	stats := newOpStats()

	var mu sync.Mutex // protects outcomes
	var outcomes []restartOutcome
	stop := make(chan struct{})
	const workers = 4
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rw := &relWorker{items: items, counters: counters, led: led, stats: stats,
				w: w, rng: rand.New(rand.NewPCG(uint64(w), 11)), counter: "kill" + strconv.Itoa(w)}
			for {
				select {
				case <-stop:
					return
				default:
				}
				o, ran := restartOp(ctx, rw)
				if !ran {
					continue
				}
				mu.Lock()
				outcomes = append(outcomes, o)
				mu.Unlock()
				if !o.ok {
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}

	time.Sleep(1500 * time.Millisecond)
	proc.kill()
	killedAt := time.Now() // the process is gone: every operation from here on finds it down
	time.Sleep(1500 * time.Millisecond)
	restartedAt := time.Now() // nothing listens on the port before this
	restartCtx, cancelRestart := context.WithTimeout(ctx, 3*time.Minute)
	defer cancelRestart()
	require.NoError(t, proc.start(restartCtx, probe), "restart on the same port")
	readyAt := time.Now()
	time.Sleep(2 * time.Second)
	close(stop)
	wg.Wait()

	// Outcomes by phase.
	mu.Lock()
	ph := restartPhasesOf(t, outcomes, killedAt, restartedAt, readyAt)
	mu.Unlock()

	// Everything acknowledged is there, once, on the restarted DynamoDB Local.
	ws := make([]int, workers)
	for w := range ws {
		ws[w] = w
	}
	r := led.readBack(t, items, ws)
	extra := 0
	for id, want := range led.counters {
		got, err := counters.Get(ctx, vCounter{ID: id}, Consistent())
		require.NoError(t, err)
		assert.GreaterOrEqual(t, got.N, want, "counter %s lost an acknowledged increment", id)
		assert.LessOrEqual(t, got.N, want+led.unknown[id], "counter %s applied an increment twice", id)
		extra += max(0, got.N-want-led.unknown[id])
	}

	ok, failed := stats.total()
	stats.mu.Lock()
	defer stats.mu.Unlock()
	assert.Empty(t, stats.unclean, "errors that are not clean")
	assert.Zero(t, stats.classes["other"]+stats.classes["condition"])
	assert.Zero(t, ph.downOK, "nothing succeeds while DynamoDB Local is down")
	assert.Positive(t, ph.downFailed, "operations were tried during the outage")
	assert.Positive(t, ph.afterOK, "the same Table and Entities work after the restart")
	assert.Zero(t, r.lost, "acknowledged items missing")
	assert.Zero(t, r.overApplied+r.underApplied)
	t.Logf("operations: %d ok, %d failed %v; before the kill ok %d / failed in flight %d; down ok %d / failed %d; after the restart ok %d / failed %d; first success %s after ready",
		ok, failed, stats.classes, ph.upOK, ph.upFailed, ph.downOK, ph.downFailed, ph.afterOK, ph.afterFailed, ph.recovered.Round(time.Millisecond))
	t.Logf("max latency per operation during the run: %v", stats.maxLatency)
	t.Logf("FIGURES kill: items written (acknowledged) %d, read back %d, lost %d, duplicated %d (present though reported failed, in flight at the kill: %d); increments acknowledged %d, extra %d",
		len(led.acked), r.read, r.lost, extra, r.phantom, sumValues(led.counters), extra)
}

// restartOutcome is one operation of TestKillAndRestartDynamoDBLocal: when it
// began and ended, and whether it succeeded.
type restartOutcome struct {
	began, ended time.Time
	ok           bool
}

// restartOp runs one of rw's operations, drawn at random, with a timeout of
// 5 s; ran is false when there was none to run (a read before any
// acknowledged write).
func restartOp(ctx context.Context, rw *relWorker) (o restartOutcome, ran bool) {
	opCtx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	began := time.Now()
	var err error
	switch rw.rng.IntN(4) {
	case 0:
		err = rw.create(opCtx)
	case 1:
		err = rw.batchPut(opCtx, 5)
	case 2:
		err = rw.mutate(opCtx, true) // failed, or ambiguous: it may have landed
	case 3:
		v, ok := rw.pick()
		if !ok {
			return restartOutcome{}, false
		}
		err = rw.get(opCtx, v)
	}
	return restartOutcome{began, time.Now(), err == nil}, true
}

// restartPhases counts TestKillAndRestartDynamoDBLocal's operations by the
// phase they ran in: up (in the 5 s before the kill), down (ended before the
// restart) and after (began once it was ready again); recovered is how soon
// after ready the first success began (-1: none).
type restartPhases struct {
	upOK, upFailed, downOK, downFailed, afterOK, afterFailed int
	recovered                                                time.Duration
}

// restartPhasesOf sorts the outcomes into phases, and fails t for an
// operation that began more than a second after the restart and failed.
func restartPhasesOf(t *testing.T, outcomes []restartOutcome, killedAt, restartedAt, readyAt time.Time) restartPhases {
	t.Helper()
	ph := restartPhases{recovered: -1}
	for _, o := range outcomes {
		switch {
		case o.began.Before(killedAt.Add(-5 * time.Second)):
		case o.began.Before(killedAt):
			if o.ok {
				ph.upOK++
			} else {
				ph.upFailed++ // in flight when it was killed
			}
		case o.ended.Before(restartedAt):
			if o.ok {
				ph.downOK++
			} else {
				ph.downFailed++
			}
		case o.began.Before(readyAt): // began while it was starting: may go either way
		default:
			if o.ok {
				ph.afterOK++
				if d := o.began.Sub(readyAt); ph.recovered < 0 || d < ph.recovered {
					ph.recovered = d
				}
			} else {
				ph.afterFailed++
			}
		}
		if !o.ok && o.began.After(readyAt.Add(time.Second)) {
			t.Errorf("an operation that began %s after the restart failed", o.began.Sub(readyAt))
		}
	}
	return ph
}

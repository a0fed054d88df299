package dynamolocal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// startJar fetches the jar when needed and runs it with java on o.Port of
// the loopback interface, or on a free port, retrying with another port if
// that one was taken meanwhile.
func startJar(ctx context.Context, o Options) (*Instance, error) {
	java, err := exec.LookPath(o.Java)
	if err != nil {
		return nil, fmt.Errorf("java: %w", err)
	}
	if err := fetchJar(ctx, o); err != nil {
		return nil, fmt.Errorf("fetch jar: %w", err)
	}
	rel, err := releaseOf(o.Version)
	if err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		inst, out, err := runJar(ctx, java, o.JarDir, o.Port, rel.options())
		if err == nil {
			if inst.version == "" {
				inst.version = o.Version // 1.11.478 prints no version: it is the release fetched
			} else if inst.version != o.Version {
				o.Logf("the jar in %s is DynamoDB Local %s, not %s: that folder was filled by hand or for another release", o.JarDir, inst.version, o.Version)
			}
			return inst, nil
		}
		if o.Port == 0 && attempt < 3 && ctx.Err() == nil && strings.Contains(out, "Address already in use") {
			continue
		}
		if out != "" {
			err = fmt.Errorf("%w; java said:\n%s", err, out)
		}
		return nil, err
	}
}

// runJar starts one java process on port (0: a free one) with the DynamoDB
// Local options opts (release.options) and waits until it answers. On
// failure it returns the tail of the process output.
func runJar(ctx context.Context, java, dir string, port int, opts []string) (*Instance, string, error) {
	if port == 0 {
		var err error
		if port, err = freePort(); err != nil {
			return nil, "", err
		}
	}
	out := &tailBuffer{max: 8 << 10}
	// Not exec.CommandContext: ctx bounds the start, not the process.
	cmd := exec.Command(java, jarArgs(opts, port)...)
	cmd.Dir = dir
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.WaitDelay = 5 * time.Second // do not hang on pipes a child may hold
	setProcAttr(cmd)
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("start java: %w", err)
	}
	exited := make(chan struct{})
	var waitErr error // written before exited is closed
	go func() {
		waitErr = cmd.Wait()
		close(exited)
	}()
	stop := func() error {
		select {
		case <-exited:
			return fmt.Errorf("java exited by itself: %v", waitErr)
		default:
		}
		if err := cmd.Process.Kill(); err != nil && !errors.Is(err, os.ErrProcessDone) {
			return err
		}
		<-exited
		return nil
	}
	inst := newInstance("http://"+net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), BackendJar, stop)
	inst.command = cmd.Args
	if err := inst.waitReady(ctx, time.Hour, exited); err != nil {
		_ = inst.Close()
		return nil, out.String(), err
	}
	inst.version = printedVersion(out.String())
	return inst, "", nil
}

// jarArgs returns java's arguments that run DynamoDB Local from its folder
// with opts on port.
func jarArgs(opts []string, port int) []string {
	args := []string{"-Djava.library.path=./DynamoDBLocal_lib", "-jar", "DynamoDBLocal.jar"}
	args = append(args, opts...)
	return append(args, "-port", strconv.Itoa(port))
}

// printedVersion returns the version that DynamoDB Local's start-up output
// names on a line "Version:\t3.3.1" (2.x and 3.x print one among their
// configuration), or "" when it names none (1.11.478 does not).
func printedVersion(output string) string {
	for line := range strings.Lines(output) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "Version:"); ok {
			if v = strings.TrimSpace(v); v != "" {
				return v
			}
		}
	}
	return ""
}

// freePort returns a TCP port that was free on the loopback interface a
// moment ago.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int

	mu  sync.Mutex // protects buf
	buf bytes.Buffer
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf.Write(p)
	if extra := t.buf.Len() - t.max; extra > 0 {
		t.buf.Next(extra)
	}
	return len(p), nil
}

func (t *tailBuffer) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.TrimSpace(t.buf.String())
}

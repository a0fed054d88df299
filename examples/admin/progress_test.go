package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"

	"github.com/singletable/singletable/admin"
)

// built is this example's command, built once for the tests that run it.
var built struct {
	once sync.Once
	dir  string
	bin  string
	err  error
}

// buildCommand builds this example's command, the admin command of the
// commerce model, into a temporary directory (once; TestMain removes it).
func buildCommand(t *testing.T) string {
	t.Helper()
	built.once.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "tableadmin-"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "tableadmin")
		if out, err := exec.Command("go", "build", "-o", built.bin, ".").CombinedOutput(); err != nil {
			built.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if built.err != nil {
		t.Fatal(built.err)
	}
	return built.bin
}

func TestMain(m *testing.M) {
	code := local.Run(m)
	if built.dir != "" {
		os.RemoveAll(built.dir)
	}
	os.Exit(code)
}

// command is the built command on the fixture's table, configured as the AWS
// CLI is: the endpoint (AWS_ENDPOINT_URL), region and keys from the
// environment the tests run in.
func (f *fixture) command(bin string, args ...string) *exec.Cmd {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), "COMMERCE_TABLE="+f.name)
	return cmd
}

// syncBuffer is a bytes.Buffer safe for a reader and a writer.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestMigrateRunTerminal: migrate run under a pseudo-terminal draws a progress
// bar, and Ctrl-C (typed on the terminal) stops it cleanly, progress saved;
// run again without a terminal, it writes plain progress lines and resumes.
func TestMigrateRunTerminal(t *testing.T) {
	f := newFixture(t)
	const n = 60
	f.seedV1(t, n)
	bin := buildCommand(t)

	// Under a pseudo-terminal: the bar, then Ctrl-C once some items are done.
	cmd := f.command(bin, "migrate", "run", "--segments", "2", "--rate", "20", "--page-size", "5", "--yes")
	tty, err := pty.StartWithSize(cmd, &pty.Winsize{Rows: 40, Cols: 160})
	if err != nil {
		t.Fatal(err)
	}
	defer tty.Close()
	var screen syncBuffer
	copied := make(chan struct{})
	go func() {
		_, _ = io.Copy(&screen, tty) // ends with EIO when the command exits
		close(copied)
	}()
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(screen.String(), "migrated") && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second)
	if _, err := tty.Write([]byte{3}); err != nil { // Ctrl-C: the terminal sends SIGINT
		t.Fatal(err)
	}
	err = cmd.Wait()
	<-copied
	out := screen.String()
	t.Logf("under a terminal:\n%q", out)
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != admin.ExitInterrupted {
		t.Fatalf("after Ctrl-C: %v, want exit code %d\n%s", err, admin.ExitInterrupted, out)
	}
	for _, want := range []string{"\r", "█", "items/s", "migrate Order", "progress saved"} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal shows no %q", want)
		}
	}
	if strings.Contains(out, "(done)") {
		t.Errorf("plain lines on a terminal:\n%s", out)
	}

	// Without a terminal: plain lines, and the run resumes where Ctrl-C left it.
	cmd = f.command(bin, "migrate", "run", "--segments", "2", "--rate", "20", "--page-size", "5", "--yes", "--json")
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("second run: %v\n%s", err, stderr.String())
	}
	t.Logf("without a terminal:\n%s%s", stdout.String(), stderr.String())
	if strings.Contains(stderr.String(), "\r") || strings.Contains(stderr.String(), "█") {
		t.Errorf("a bar without a terminal:\n%q", stderr.String())
	}
	if !strings.Contains(stderr.String(), "migrate Order: ") || !strings.Contains(stderr.String(), "items/s") || !strings.Contains(stderr.String(), "(done)") {
		t.Errorf("no plain progress lines:\n%s", stderr.String())
	}
	var res runResult
	if err := json.Unmarshal(bytes.TrimSpace(stdout.Bytes()), &res); err != nil {
		t.Fatal(err)
	}
	if !res.Resumed || res.Run.Migrated == 0 || res.Run.Migrated >= n || res.Total.Migrated != n || res.Total.Lost != 0 {
		t.Fatalf("the run after Ctrl-C did not resume: %+v", res)
	}
}

// TestConfirmOnTerminal: a write asks on the terminal first; "n" writes
// nothing (exit code 6), "y" writes.
func TestConfirmOnTerminal(t *testing.T) {
	f := newFixture(t)
	f.run(t, `{"orderId":"o1","customerId":"c1","status":"PLACED","createdAt":"2026-01-05T10:00:00Z","totalCents":4200}`, "put", "Order", "--yes").want(t, admin.ExitOK)
	bin := buildCommand(t)
	for _, c := range []struct {
		answer string
		code   int
	}{{"n", admin.ExitDeclined}, {"y", admin.ExitOK}} {
		cmd := f.command(bin, "delete", "Order", "--key", "orderId=o1", "--key", "version=1")
		tty, err := pty.Start(cmd)
		if err != nil {
			t.Fatal(err)
		}
		var screen syncBuffer
		copied := make(chan struct{})
		go func() {
			_, _ = io.Copy(&screen, tty)
			close(copied)
		}()
		deadline := time.Now().Add(20 * time.Second)
		for !strings.Contains(screen.String(), "[y/N]") && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if _, err := tty.Write([]byte(c.answer + "\n")); err != nil {
			t.Fatal(err)
		}
		err = cmd.Wait()
		<-copied
		tty.Close()
		t.Logf("answer %q:\n%s", c.answer, screen.String())
		code := 0
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code = exit.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		if code != c.code || !strings.Contains(screen.String(), "delete Order PK=ORDER#o1 SK=ORDER from table "+f.name+"? [y/N]") {
			t.Fatalf("answer %q: exit code %d, want %d", c.answer, code, c.code)
		}
	}
	f.run(t, "", "get", "Order", "--key", "orderId=o1").want(t, admin.ExitNotFound)
}

// Command dynamodb-local fetches or runs DynamoDB Local the way package
// dynamolocal does, for Makefiles, scripts and a developer's shell. It lives in
// the module github.com/singletable/singletable/dynamolocal, so from the
// repository's root it runs as
//
//	go -C dynamolocal run ./cmd/dynamodb-local COMMAND [flags]
//
// Commands:
//
//	fetch [-version V]
//	    Make sure the jar of DynamoDB Local V is in its folder; print the folder.
//	serve [-port N] [-version V] [-backend B]
//	    Start one (the order of dynamolocal.Start: Testcontainers when a Docker
//	    API answers, else the jar), print the line that points the AWS SDK at it,
//	    "export AWS_ENDPOINT_URL=URL AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=local
//	    AWS_SECRET_ACCESS_KEY=local" (paste it into another shell: programs
//	    that load the SDK's configuration, config.LoadDefaultConfig, then reach
//	    it), and run until interrupted.
//	run [-port N] [-version V] [-backend B] [-dir D] [-jar=false] -- COMMAND [ARG...]
//	    Start one, run COMMAND (in folder D) with AWS_ENDPOINT_URL=URL in its
//	    environment (and AWS_ENDPOINT_URL_DYNAMODB=URL when that was set), with
//	    AWS_REGION, AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY when they are
//	    unset (DynamoDB Local takes any), stop DynamoDB Local, and exit with
//	    COMMAND's status. This is how `make test` and `make examples` run the
//	    library's tests and examples.
//
// run also exports DYNAMODB_LOCAL_STARTED (the backend that started it),
// DYNAMODB_LOCAL_VERSION (the release it runs, when known) and, unless
// -jar=false, DYNAMODB_LOCAL_DIR: the folder of the jar of that release,
// fetched when java is found, for tests that run a DynamoDB Local process of
// their own. An instance it did not start (AWS_ENDPOINT_URL already set) is
// passed on as it is, without DYNAMODB_LOCAL_STARTED.
//
// Flags override the environment variables of package dynamolocal
// (DYNAMODB_LOCAL_PORT, DYNAMODB_LOCAL_VERSION, DYNAMODB_LOCAL_BACKEND,
// AWS_ENDPOINT_URL, DYNAMODB_LOCAL_DIR, ...). Progress goes to standard error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/singletable/singletable/dynamolocal"
)

const usage = `usage:
  dynamodb-local fetch [-version V]
  dynamodb-local serve [-port N] [-version V] [-backend B]
  dynamodb-local run [-port N] [-version V] [-backend B] [-dir D] [-jar=false] -- COMMAND [ARG...]`

func main() {
	code, err := run(os.Args[1:], os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "dynamodb-local:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// run runs one command and returns the exit code.
func run(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 {
		return 2, errors.New(usage)
	}
	fs := flag.NewFlagSet("dynamodb-local "+args[0], flag.ContinueOnError)
	fs.SetOutput(stderr)
	version := fs.String("version", "", "DynamoDB Local release: "+dynamolocal.DefaultVersion+" or "+dynamolocal.LegacyVersion+
		" (default: $DYNAMODB_LOCAL_VERSION, else "+dynamolocal.DefaultVersion+")")
	opts := func() []func(*dynamolocal.Options) {
		if *version == "" {
			return nil
		}
		return []func(*dynamolocal.Options){dynamolocal.WithVersion(*version)}
	}
	switch args[0] {
	case "fetch":
		if err := fs.Parse(args[1:]); err != nil || fs.NArg() > 0 {
			return 2, errors.New(usage)
		}
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		dir, err := dynamolocal.FetchJar(ctx, opts()...)
		if err != nil {
			return 1, err
		}
		fmt.Fprintln(stdout, dir)
		return 0, nil

	case "serve", "run":
		port := fs.Int("port", 0, "port of the loopback interface to listen on (default: $DYNAMODB_LOCAL_PORT, else a free port)")
		backend := fs.String("backend", "", "testcontainers, jar or endpoint (default: $DYNAMODB_LOCAL_BACKEND, else the first that works)")
		dir, jar := new(string), new(bool)
		if args[0] == "run" {
			dir = fs.String("dir", "", "folder to run COMMAND in (default: the current one)")
			jar = fs.Bool("jar", true, "fetch the jar of the release when java is found, and export DYNAMODB_LOCAL_DIR")
		}
		if err := fs.Parse(args[1:]); err != nil {
			return 2, errors.New(usage)
		}
		o := opts()
		if *port != 0 {
			o = append(o, dynamolocal.WithPort(*port))
		}
		if *backend != "" {
			o = append(o, dynamolocal.WithBackend(*backend))
		}
		if args[0] == "serve" {
			if fs.NArg() > 0 {
				return 2, errors.New(usage)
			}
			return serve(stdout, o)
		}
		if fs.NArg() == 0 {
			return 2, errors.New(usage)
		}
		return runCommand(fs.Args(), *dir, *jar, o, stderr)
	}
	return 2, fmt.Errorf("unknown command %q\n%s", args[0], usage)
}

// serve starts DynamoDB Local, prints its endpoint and waits for a signal.
func serve(stdout io.Writer, opts []func(*dynamolocal.Options)) (int, error) {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	inst, err := dynamolocal.Start(ctx, opts...)
	if err != nil {
		return 1, err
	}
	fmt.Fprintf(stdout, "export %s\n", strings.Join(sdkEnv(inst.Endpoint(), func(string) string { return "" }), " "))
	fmt.Fprintf(os.Stderr, "dynamodb-local: serving %s until interrupted; run the export line above in the shell of your program\n", inst)
	<-ctx.Done()
	return 0, inst.Close()
}

// runCommand starts DynamoDB Local, runs argv with it, and stops it. Signals
// that arrive meanwhile go to the command, which decides when to end.
func runCommand(argv []string, dir string, jar bool, opts []func(*dynamolocal.Options), stderr io.Writer) (int, error) {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	starting := make(chan struct{})
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-starting:
		}
	}()
	inst, err := dynamolocal.Start(ctx, opts...)
	if err != nil {
		close(starting)
		return 1, err
	}
	env := append(os.Environ(), sdkEnv(inst.Endpoint(), os.Getenv)...)
	if inst.Backend() != dynamolocal.BackendEndpoint {
		env = append(env, "DYNAMODB_LOCAL_STARTED="+inst.Backend())
		if inst.Version() != "" {
			env = append(env, "DYNAMODB_LOCAL_VERSION="+inst.Version())
		}
	}
	if jar && javaFound() {
		// For tests that run a DynamoDB Local of their own (and kill it).
		if jarDir, err := dynamolocal.FetchJar(ctx, opts...); err == nil {
			env = append(env, "DYNAMODB_LOCAL_DIR="+jarDir)
		} else {
			fmt.Fprintf(stderr, "dynamodb-local run: DYNAMODB_LOCAL_DIR not set: %v\n", err)
		}
	}
	close(starting)
	if ctx.Err() != nil {
		return 1, errors.Join(ctx.Err(), inst.Close())
	}
	quoted := strings.Join(argv, " ")
	fmt.Fprintf(stderr, "dynamodb-local run: %s; running %s\n", inst, quoted)

	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env // later entries win
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	code := 0
	if err = cmd.Start(); err == nil {
		done := make(chan struct{})
		go func() {
			for {
				select {
				case s := <-sigs:
					_ = cmd.Process.Signal(s)
				case <-done:
					return
				}
			}
		}()
		err = cmd.Wait()
		close(done)
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			code, err = exitCode(exit), nil
		}
	}
	if err != nil {
		code = 1
		err = fmt.Errorf("run %s: %w", quoted, err)
	}
	fmt.Fprintf(stderr, "dynamodb-local run: %s exited with status %d; stopping %s\n", quoted, code, inst)
	if cerr := inst.Close(); cerr != nil {
		err = errors.Join(err, cerr)
		if code == 0 {
			code = 1
		}
	}
	return code, err
}

// exitCode is the status of a command that exited: its code, or 128 plus
// the signal that killed it, as a shell reports it.
func exitCode(exit *exec.ExitError) int {
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return exit.ExitCode()
}

// javaFound says whether the jar backend would find java: $JAVA_HOME/bin/java
// or java in PATH.
func javaFound() bool {
	if home := os.Getenv("JAVA_HOME"); home != "" {
		if fi, err := os.Stat(filepath.Join(home, "bin", "java")); err == nil && !fi.IsDir() {
			return true
		}
	}
	_, err := exec.LookPath("java")
	return err == nil
}

// sdkEnv is the environment that points the AWS SDK's configuration at the
// DynamoDB Local at endpoint: AWS_ENDPOINT_URL (and AWS_ENDPOINT_URL_DYNAMODB
// when getenv has it, since it wins), and a region and keys where getenv has
// none (DynamoDB Local takes any).
func sdkEnv(endpoint string, getenv func(string) string) []string {
	env := []string{"AWS_ENDPOINT_URL=" + endpoint}
	if getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" {
		env = append(env, "AWS_ENDPOINT_URL_DYNAMODB="+endpoint)
	}
	if getenv("AWS_REGION") == "" {
		env = append(env, "AWS_REGION=us-east-1")
	}
	if getenv("AWS_ACCESS_KEY_ID") == "" || getenv("AWS_SECRET_ACCESS_KEY") == "" {
		env = append(env, "AWS_ACCESS_KEY_ID=local", "AWS_SECRET_ACCESS_KEY=local")
	}
	return env
}

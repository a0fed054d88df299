// Command dynamodb-local fetches or runs DynamoDB Local the way package
// dynamolocal does, for scripts and for a developer's shell.
//
// Usage:
//
//	dynamodb-local fetch   # make sure the jar is in its folder; print the folder
//	dynamodb-local serve   # start one (same order as dynamolocal.Start), print
//	                       # DYNAMODB_ENDPOINT=..., run until interrupted
//
// Both honour the environment variables of package dynamolocal
// (DYNAMODB_LOCAL_DIR, DYNAMODB_LOCAL_BACKEND, DYNAMODB_ENDPOINT, ...).
// Progress goes to standard error.
package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/singletable/singletable/dynamolocal"
)

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}

func run(args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("usage: dynamodb-local fetch|serve")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	switch args[0] {
	case "fetch":
		dir, err := dynamolocal.FetchJar(ctx)
		if err != nil {
			return err
		}
		fmt.Println(dir)
		return nil
	case "serve":
		inst, err := dynamolocal.Start(ctx)
		if err != nil {
			return err
		}
		fmt.Printf("DYNAMODB_ENDPOINT=%s\n", inst.Endpoint())
		<-ctx.Done()
		return inst.Close()
	}
	return fmt.Errorf("usage: dynamodb-local fetch|serve (not %q)", args[0])
}

// Package exampleenv is the scaffolding that the programs under examples/ and
// their tests share to run against DynamoDB Local: the guard that keeps them
// off AWS, a table of their own, a context that ends on Ctrl-C, and one
// connection per test binary. It reads nothing but the AWS SDK's standard
// configuration (config.LoadDefaultConfig: AWS_ENDPOINT_URL, AWS_REGION, the
// keys), so an example's connection code is the SDK's own and can be pasted
// into a program; nothing of this package is needed outside the examples.
//
// `make examples` and `make test` start DynamoDB Local and set those
// variables; `make dynamodb-local-serve` starts one and prints the line that
// sets them in a shell.
package exampleenv

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// HowTo says how to get a DynamoDB Local for the examples and their tests. It
// ends the errors and skip messages of this package.
const HowTo = "`make examples` and `make test` start one and set it; or start one with `make dynamodb-local-serve` " +
	"(port 8000) and run the export line it prints (AWS_ENDPOINT_URL=http://127.0.0.1:8000, a region and keys) in this shell"

// Timeout bounds the run of an example started by [Run].
const Timeout = 5 * time.Minute

// ErrNoEndpoint is wrapped by the errors of [Run] and [Shared] when the
// environment names no DynamoDB endpoint ([Endpoint]).
var ErrNoEndpoint = errors.New("AWS_ENDPOINT_URL is not set: the examples create and delete tables, so they run against DynamoDB Local only")

// Endpoint returns the DynamoDB endpoint the environment gives the AWS SDK
// (AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL), "" when it gives none
// and the SDK would call AWS.
func Endpoint() string {
	for _, name := range []string{"AWS_ENDPOINT_URL_DYNAMODB", "AWS_ENDPOINT_URL"} {
		if v := strings.TrimSpace(os.Getenv(name)); v != "" {
			return v
		}
	}
	return ""
}

// LoadConfig is config.LoadDefaultConfig for the DynamoDB Local the
// environment names: an error that says how to get one when it names none,
// and one that says what to set when the SDK finds no region or credentials
// (DynamoDB Local takes any).
func LoadConfig(ctx context.Context, optFns ...func(*config.LoadOptions) error) (aws.Config, error) {
	if Endpoint() == "" {
		return aws.Config{}, fmt.Errorf("%w. %s", ErrNoEndpoint, HowTo)
	}
	cfg, err := config.LoadDefaultConfig(ctx, optFns...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("the AWS SDK's configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, errors.New("no AWS region: DynamoDB Local takes any, set AWS_REGION=us-east-1. " + HowTo)
	}
	rctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if cfg.Credentials == nil {
		return aws.Config{}, errors.New("no AWS credentials: DynamoDB Local takes any, set AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local. " + HowTo)
	}
	if _, err := cfg.Credentials.Retrieve(rctx); err != nil {
		return aws.Config{}, fmt.Errorf("no AWS credentials (DynamoDB Local takes any: set AWS_ACCESS_KEY_ID=local AWS_SECRET_ACCESS_KEY=local. %s): %w", HowTo, err)
	}
	return cfg, nil
}

// Run is the start every example's main shares: it loads the SDK's
// configuration ([LoadConfig]: only for the DynamoDB Local the environment
// names), names a table of the example's own, "singletable-NAME-xxxxxxxx", and
// calls body with a context that ends on Ctrl-C or after [Timeout]. The
// example makes its clients from cfg, as a program on AWS does:
// dynamodb.NewFromConfig(cfg).
func Run(name string, body func(ctx context.Context, cfg aws.Config, tableName string) error) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	cfg, err := LoadConfig(ctx)
	if err != nil {
		return err
	}
	return body(ctx, cfg, fmt.Sprintf("singletable-%s-%08x", name, rand.Uint32()))
}

// DeleteTable deletes an example's table when the example ends (defer it right
// after creating the table), even when ctx has ended: it joins the failure into
// *errp, or prints "deleted table NAME" to out after an empty line.
func DeleteTable(ctx context.Context, table interface{ DeleteTable(context.Context) error }, tableName string, out io.Writer, errp *error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	if err := table.DeleteTable(ctx); err != nil {
		*errp = errors.Join(*errp, err)
		return
	}
	fmt.Fprintf(out, "\ndeleted table %s\n", tableName)
}

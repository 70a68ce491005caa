// Command dev runs the service locally (make dev): it starts the AWS stand-ins on the ports the
// platform defaults name (or those DYNAMODB_PORT, SQS_PORT, S3_PORT and OPENSEARCH_PORT name, so
// that a second stack runs beside the first; PORT moves the API), all on loopback, creates the
// resources of template.yaml in them, and serves every function's handler on one HTTP server at
// the routes the template gives it, as API Gateway would. It prints an API key for the run and
// stops everything it started on Ctrl-C or SIGTERM.
//
// With -test it is the test runner instead (make test, make bench): the stand-ins start on free
// ports, their endpoints are exported as AGENTORCH_TEST_*, and `go test` runs with the arguments
// after the flags (default -count=1 ./...); it exits with go test's status. With -deps it only
// installs what the stand-ins need.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentorch/agentorch/infra/localstack"
)

func main() {
	os.Exit(run())
}

func run() int {
	test := flag.Bool("test", false, "run `go test ARGS...` against a fresh stack on free ports")
	deps := flag.Bool("deps", false, "install the stand-ins (npm packages, Java) if missing, then exit")
	flag.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: dev [-port N]\n       dev -test [-- go test arguments]\n       dev -deps")
		flag.PrintDefaults()
	}
	apiPort, err := localstack.DevAPIPort()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		return 2
	}
	port := flag.Int("port", apiPort, "API port ($PORT)")
	flag.Parse()
	// Whoever started us (go run, make) may be killed rather than us: take that as SIGTERM so
	// the stand-ins are stopped rather than orphaned.
	dieWithParent()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *deps {
		return installDeps(ctx)
	}
	if *test {
		return runTests(ctx, flag.Args())
	}
	ports, err := localstack.DevPorts()
	if err != nil {
		fmt.Fprintln(os.Stderr, "dev:", err)
		return 2
	}
	if err := serve(ctx, *port, ports); err != nil {
		if ctx.Err() != nil {
			err = errors.New("interrupted while starting; everything started is stopped")
		}
		fmt.Fprintln(os.Stderr, "dev:", err)
		return 1
	}
	return 0
}

func installDeps(ctx context.Context) int {
	root, err := localstack.RepoRoot()
	if err == nil {
		err = localstack.EnsureDeps(ctx, root, os.Stderr)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "deps:", err)
		return 1
	}
	return 0
}

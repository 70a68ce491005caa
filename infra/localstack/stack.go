package localstack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/agentorch/agentorch/infra/childproc"
	"github.com/agentorch/agentorch/infra/opensearchlocal"
	"github.com/agentorch/agentorch/infra/s3local"
)

// ReadyTimeout bounds how long Start waits for a stand-in to answer.
const ReadyTimeout = 60 * time.Second

// Host is the address every stand-in listens on: loopback only, so that nothing on the network
// reaches a stack that takes any credentials.
const Host = "127.0.0.1"

// stopGrace is how long a stand-in may take to exit after SIGTERM before it is killed.
const stopGrace = 5 * time.Second

// Options configure Start.
type Options struct {
	DynamoPort     int // 0: any free port
	SQSPort        int
	S3Port         int
	OpenSearchPort int
	Root           string    // repository root holding .cache/node; RepoRoot() when empty
	Log            io.Writer // progress lines; nil discards them
}

// Endpoints are the base URLs of the running stand-ins.
type Endpoints struct {
	DynamoDB   string
	S3         string
	SQS        string
	OpenSearch string // the in-process OpenSearch stand-in (infra/opensearchlocal)
}

// Stack is a running set of stand-ins. Stop it when done: the children run in their own process
// groups and would otherwise outlive a clean exit of the caller.
type Stack struct {
	endpoints Endpoints
	children  []*child
	s3        *http.Server
	os        *http.Server
	osStand   *opensearchlocal.Server
	log       io.Writer
	failed    chan error    // a stand-in exited while the stack ran
	stopping  chan struct{} // closed when Stop begins
	stopOnce  sync.Once
	stopErr   error
}

// Start starts DynamoDB Local (java), fauxqs (node), the in-process S3 stand-in (gofakes3 behind
// infra/s3local, which checks presigned URLs' signatures with the stack's key pair) and the
// in-process OpenSearch stand-in, each listening on Host only, and returns once each answers a
// real SDK call. Run EnsureDeps first on a fresh machine.
func Start(ctx context.Context, opts Options) (*Stack, error) {
	if opts.Log == nil {
		opts.Log = io.Discard
	}
	if opts.Root == "" {
		root, err := RepoRoot()
		if err != nil {
			return nil, err
		}
		opts.Root = root
	}
	jarDir, err := dynamoDir(opts.Root)
	if err != nil {
		return nil, err
	}
	launcher, err := dynamoLauncher(opts.Root, jarDir)
	if err != nil {
		return nil, err
	}
	if !exists(fauxqsCLI(opts.Root)) {
		return nil, fmt.Errorf("fauxqs is not installed under %s (run EnsureDeps)", filepath.Join(opts.Root, nodeDir))
	}
	dynamoPort, err := port("DynamoDB Local", opts.DynamoPort)
	if err != nil {
		return nil, err
	}
	sqsPort, err := port("fauxqs (SQS)", opts.SQSPort)
	if err != nil {
		return nil, err
	}
	s3Listener, err := net.Listen("tcp", net.JoinHostPort(Host, strconv.Itoa(opts.S3Port)))
	if err != nil {
		return nil, fmt.Errorf("port %d for gofakes3 (S3) is busy, is another stack running? %w", opts.S3Port, err)
	}
	osListener, err := net.Listen("tcp", net.JoinHostPort(Host, strconv.Itoa(opts.OpenSearchPort)))
	if err != nil {
		_ = s3Listener.Close()
		return nil, fmt.Errorf("port %d for the OpenSearch stand-in is busy, is another stack running? %w", opts.OpenSearchPort, err)
	}

	start := time.Now()
	st := &Stack{log: opts.Log, failed: make(chan error, 2), stopping: make(chan struct{})}
	st.s3 = &http.Server{Handler: s3local.New(s3local.Options{Keys: map[string]string{AccessKeyID: SecretAccessKey}}), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = st.s3.Serve(s3Listener) }()
	st.osStand = opensearchlocal.New(opensearchlocal.Options{})
	st.os = &http.Server{Handler: st.osStand, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = st.os.Serve(osListener) }()
	st.endpoints = Endpoints{
		DynamoDB:   "http://" + net.JoinHostPort(Host, strconv.Itoa(dynamoPort)),
		S3:         "http://" + s3Listener.Addr().String(),
		SQS:        "http://" + net.JoinHostPort(Host, strconv.Itoa(sqsPort)),
		OpenSearch: "http://" + osListener.Addr().String(),
	}

	// DynamoDB Local's own main listens on every interface and has no option for the address,
	// and fauxqs's CLI listens on 0.0.0.0: each runs under a small main of ours (launch/) that
	// starts the same server on Host.
	dynamo := exec.Command("java", "-Xmx512m",
		"-Djava.library.path="+filepath.Join(jarDir, "DynamoDBLocal_lib"), "-Dagentorch.host="+Host,
		"-cp", launcher+string(os.PathListSeparator)+filepath.Join(jarDir, "DynamoDBLocal.jar"), dynamoLauncherClass,
		"-inMemory", "-sharedDb", "-disableTelemetry", "-port", strconv.Itoa(dynamoPort))
	dynamo.Dir = jarDir
	// From the directory holding node_modules, so that the script's import finds the pinned
	// fauxqs. FAUXQS_HOST names the host in its queue URLs.
	faux := exec.Command("node", "--input-type=module", "-e", fauxqsMain, Host)
	faux.Dir = filepath.Join(opts.Root, nodeDir)
	faux.Env = append(os.Environ(), "FAUXQS_HOST=127.0.0.1", "FAUXQS_PORT="+strconv.Itoa(sqsPort))
	for _, c := range []struct {
		name string
		cmd  *exec.Cmd
	}{{"DynamoDB Local", dynamo}, {"fauxqs", faux}} {
		ch, err := startChild(c.name, c.cmd)
		if err != nil {
			_ = st.Stop()
			return nil, err
		}
		st.children = append(st.children, ch)
	}

	awsCfg := AWSConfig()
	probes := []func(context.Context) error{
		func(ctx context.Context) error {
			_, err := dynamoClient(awsCfg, st.endpoints.DynamoDB, true).ListTables(ctx, &dynamodb.ListTablesInput{Limit: int32p(1)})
			return err
		},
		func(ctx context.Context) error {
			_, err := sqsClient(awsCfg, st.endpoints.SQS, true).ListQueues(ctx, &sqs.ListQueuesInput{})
			return err
		},
	}
	errs := make([]error, len(st.children))
	var wg sync.WaitGroup
	for i, ch := range st.children {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = ch.waitReady(ctx, probes[i])
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		_ = st.Stop()
		return nil, err
	}
	for _, ch := range st.children {
		go func() {
			<-ch.done
			select {
			case <-st.stopping:
			default:
				st.failed <- fmt.Errorf("%s exited (%w); its output ends:\n%s", ch.name, ch.err, ch.out)
			}
		}()
	}
	_, _ = fmt.Fprintf(opts.Log, "localstack: DynamoDB %s, SQS %s, S3 %s, OpenSearch %s ready in %s\n",
		st.endpoints.DynamoDB, st.endpoints.SQS, st.endpoints.S3, st.endpoints.OpenSearch, time.Since(start).Round(time.Millisecond))
	return st, nil
}

// Endpoints returns the base URLs of the stand-ins.
func (s *Stack) Endpoints() Endpoints { return s.endpoints }

// Failed delivers an error when a stand-in exits on its own while the stack runs; a long-lived
// caller (the dev server) should stop then rather than serve errors.
func (s *Stack) Failed() <-chan error { return s.failed }

// Stop ends every stand-in: SIGTERM to each child's process group, SIGKILL after a grace period,
// and waits for them. It is safe to call more than once.
func (s *Stack) Stop() error {
	s.stopOnce.Do(func() {
		close(s.stopping)
		errs := make([]error, len(s.children))
		var wg sync.WaitGroup
		for i, ch := range s.children {
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = ch.stop()
			}()
		}
		if s.s3 != nil {
			_ = s.s3.Close()
		}
		if s.os != nil {
			_ = s.os.Close()
			s.osStand.Close()
		}
		wg.Wait()
		s.stopErr = errors.Join(errs...)
	})
	return s.stopErr
}

// port checks that a fixed port is free on Host or picks a free one when p is 0.
func port(name string, p int) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(Host, strconv.Itoa(p)))
	if err != nil {
		return 0, fmt.Errorf("port %d for %s is busy, is another stack running? %w", p, name, err)
	}
	defer func() { _ = l.Close() }()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// child is one stand-in process.
type child struct {
	name string
	cmd  *exec.Cmd
	out  *childproc.Tail
	done chan struct{}
	err  error // the result of Wait, set before done is closed
}

func startChild(name string, cmd *exec.Cmd) (*child, error) {
	ch := &child{name: name, cmd: cmd, out: &childproc.Tail{Max: 8 << 10}, done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = ch.out, ch.out
	// Own process group: a terminal's Ctrl-C reaches only the parent, which then stops the group
	// in order; and on Linux the child dies with the parent even if the parent is killed outright.
	cmd.SysProcAttr = childproc.SysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, cmd.Path, err)
	}
	go func() {
		ch.err = cmd.Wait()
		close(ch.done)
	}()
	return ch, nil
}

// waitReady polls probe until it succeeds, the child exits or ReadyTimeout passes.
func (c *child) waitReady(ctx context.Context, probe func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var last error
	for {
		pctx, pcancel := context.WithTimeout(ctx, 2*time.Second)
		last = probe(pctx)
		pcancel()
		if last == nil {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s exited before it was ready (%w); its output ends:\n%s", c.name, c.err, c.out)
		case <-ctx.Done():
			return fmt.Errorf("%s did not answer within %s (last error: %w); its output ends:\n%s", c.name, ReadyTimeout, last, c.out)
		case <-tick.C:
		}
	}
}

// stop ends the child's process group and waits for the child. It reports a child that had
// already exited on its own: the stack was broken before the caller was done with it.
func (c *child) stop() error {
	pgid := c.cmd.Process.Pid
	select {
	case <-c.done:
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		return fmt.Errorf("%s had exited on its own (%w); its output ends:\n%s", c.name, c.err, c.out)
	default:
	}
	_ = syscall.Kill(-pgid, syscall.SIGTERM)
	select {
	case <-c.done:
	case <-time.After(stopGrace):
		_ = syscall.Kill(-pgid, syscall.SIGKILL)
		<-c.done
	}
	// Anything the child left in its group goes too.
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	return nil
}

package lambdarun

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/agentorch/agentorch/infra/childproc"
)

// Runtime API paths (https://docs.aws.amazon.com/lambda/latest/dg/runtimes-api.html).
const (
	pathNext      = "GET /2018-06-01/runtime/invocation/next"
	pathResponse  = "POST /2018-06-01/runtime/invocation/{id}/response"
	pathError     = "POST /2018-06-01/runtime/invocation/{id}/error"
	pathInitError = "POST /2018-06-01/runtime/init/error"
)

// Lambda's limits on a response: Invoke's, and InvokeWithResponseStream's (soft on AWS).
const (
	maxPayload       = 6 << 20
	maxStreamPayload = 20 << 20
)

// Headers and trailers of the streaming response mode (the runtime API's
// runtimes-custom-response-streaming): a runtime declares the mode with the header (the Go
// runtime only sends its body chunked) and reports a failure met mid-stream in the trailers, the
// body base64-encoded.
const (
	headerResponseMode = "Lambda-Runtime-Function-Response-Mode"
	headerErrorType    = "Lambda-Runtime-Function-Error-Type"
	trailerErrorBody   = "Lambda-Runtime-Function-Error-Body"
)

// Run starts the bootstrap with the Runtime API stand-in, serves opts.Event once and returns the
// function's answer. A failure the function reports comes back as a *FunctionError along with
// the Result. The process is killed afterwards, as Lambda freezes and eventually ends it.
func Run(ctx context.Context, opts Options) (Result, error) {
	var res Result
	if opts.MemoryMB == 0 {
		opts.MemoryMB = DefaultMemoryMB
	}
	if opts.Timeout == 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.Stderr == nil {
		opts.Stderr = io.Discard
	}
	if opts.Function == "" {
		opts.Function = "function"
	}
	fi, err := os.Stat(opts.Bootstrap)
	if err != nil {
		return res, fmt.Errorf("bootstrap: %w", err)
	}
	res.BinaryBytes = fi.Size()

	rt := &runtimeAPI{event: opts.Event, function: opts.Function, timeout: opts.Timeout, stream: opts.Stream,
		requestID: newID(), done: make(chan answer, 1), closing: make(chan struct{})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return res, fmt.Errorf("runtime api: %w", err)
	}
	srv := &http.Server{Handler: rt.handler(), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = srv.Serve(l) }()
	defer func() {
		close(rt.closing)
		_ = srv.Close()
	}()

	out := &childproc.Tail{Max: 8 << 10}
	cmd := exec.Command(opts.Bootstrap)
	cmd.Dir = os.TempDir()
	cmd.Env = append(append(lambdaEnv(opts, l.Addr().String()), LocalEnv()...), opts.Env...)
	cmd.Stdout = io.MultiWriter(opts.Stderr, out)
	cmd.Stderr = cmd.Stdout
	cmd.SysProcAttr = childproc.SysProcAttr()
	rt.start = time.Now()
	if err := cmd.Start(); err != nil {
		return res, fmt.Errorf("start bootstrap: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stop := func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited //nolint:errcheck // killed: its exit status only says so
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			res.MaxRSSBytes = ru.Maxrss * 1024 // Linux reports kilobytes
		}
	}

	timer := time.NewTimer(opts.Timeout + 10*time.Second)
	defer timer.Stop()
	var a answer
	select {
	case a = <-rt.done:
		stop()
	case err := <-exited:
		exited <- err // for stop's receive
		stop()
		select {
		case a = <-rt.done: // answered, then exited
		default:
			return res, fmt.Errorf("bootstrap exited (%w) without answering; its output ends:\n%s", err, out)
		}
	case <-ctx.Done():
		stop()
		return res, ctx.Err()
	case <-timer.C:
		stop()
		return res, fmt.Errorf("no answer within %s; the function's output ends:\n%s", opts.Timeout, out)
	}
	res.Response, res.Streamed = a.payload, a.streamed
	res.InitDuration, res.Duration, res.FirstByte = rt.timings()
	if a.errPhase != "" {
		return res, &FunctionError{Phase: a.errPhase, Type: a.errType, Payload: a.errPayload}
	}
	return res, nil
}

// answer is what the function posted for the invocation.
type answer struct {
	payload    []byte // the response, or the error document posted to /error
	streamed   bool   // the response came chunked
	errPhase   string // empty on success
	errType    string
	errPayload []byte
}

// runtimeAPI serves one invocation.
type runtimeAPI struct {
	event     []byte
	function  string
	timeout   time.Duration
	stream    io.Writer // a streaming invocation's client; nil for Invoke
	requestID string
	start     time.Time
	done      chan answer
	closing   chan struct{}

	mu        sync.Mutex
	served    bool
	firstNext time.Time
	servedAt  time.Time
	firstByte time.Time
	answered  time.Time
}

func (rt *runtimeAPI) handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(pathNext, rt.next)
	mux.HandleFunc(pathResponse, func(w http.ResponseWriter, r *http.Request) { rt.post(w, r, "") })
	mux.HandleFunc(pathError, func(w http.ResponseWriter, r *http.Request) { rt.post(w, r, "invoke") })
	mux.HandleFunc(pathInitError, func(w http.ResponseWriter, r *http.Request) { rt.post(w, r, "init") })
	return mux
}

func (rt *runtimeAPI) next(w http.ResponseWriter, r *http.Request) {
	rt.mu.Lock()
	now := time.Now()
	if rt.firstNext.IsZero() {
		rt.firstNext = now
	}
	first := !rt.served
	if first {
		rt.served, rt.servedAt = true, now
	}
	rt.mu.Unlock()
	if !first {
		// The one event is served; Lambda would freeze the process here. Hold the request until
		// the run ends.
		select {
		case <-r.Context().Done():
		case <-rt.closing:
		}
		return
	}
	h := w.Header()
	h.Set("Lambda-Runtime-Aws-Request-Id", rt.requestID)
	h.Set("Lambda-Runtime-Deadline-Ms", strconv.FormatInt(now.Add(rt.timeout).UnixMilli(), 10))
	h.Set("Lambda-Runtime-Invoked-Function-Arn", "arn:aws:lambda:us-east-1:000000000000:function:"+rt.function)
	h.Set("Lambda-Runtime-Trace-Id", fmt.Sprintf("Root=1-%08x-%s;Parent=%s;Sampled=0", now.Unix(), newID()[:24], newID()[:16]))
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(rt.event)
}

func (rt *runtimeAPI) post(w http.ResponseWriter, r *http.Request, phase string) {
	if phase != "init" && r.PathValue("id") != rt.requestID {
		http.Error(w, `{"errorMessage":"unknown request id","errorType":"InvalidRequestID"}`, http.StatusBadRequest)
		return
	}
	limit, out := int64(maxPayload), io.Writer(io.Discard)
	if phase == "" && rt.stream != nil {
		limit, out = maxStreamPayload, rt.stream
	}
	body, err := rt.read(http.MaxBytesReader(w, r.Body, limit), out)
	var tooLarge *http.MaxBytesError
	a := answer{payload: body, errPhase: phase, errType: r.Header.Get(headerErrorType),
		streamed: slices.Contains(r.TransferEncoding, "chunked") || strings.EqualFold(r.Header.Get(headerResponseMode), "streaming")}
	if errors.As(err, &tooLarge) {
		http.Error(w, `{"errorMessage":"response payload too large","errorType":"RequestEntityTooLarge"}`, http.StatusRequestEntityTooLarge)
		a.errPhase, a.errType = "invoke", "Function.ResponseSizeTooLarge"
		a.errPayload = fmt.Appendf(nil, `{"errorMessage":"Response payload size exceeded maximum allowed payload size (%d bytes).","errorType":"Function.ResponseSizeTooLarge"}`, limit)
	} else if err != nil {
		return
	}
	if t := r.Trailer.Get(headerErrorType); t != "" {
		// A failure met while the response was streaming.
		a.errPhase, a.errType = "invoke", t
		a.errPayload = []byte(r.Trailer.Get(trailerErrorBody))
		if dec, err := base64.StdEncoding.DecodeString(string(a.errPayload)); err == nil {
			a.errPayload = dec
		}
	} else if a.errPhase != "" && a.errPayload == nil {
		a.errPayload = body
	}
	rt.mu.Lock()
	rt.answered = time.Now()
	rt.mu.Unlock()
	if tooLarge == nil {
		w.WriteHeader(http.StatusAccepted)
		_, _ = w.Write([]byte(`{"status":"OK"}`))
	}
	select {
	case rt.done <- a:
	default:
	}
}

// read reads what the function posts, passing each chunk on to out as it arrives (a streaming
// invocation's client; a client that went away does not stop the function), and notes when the
// first byte came.
func (rt *runtimeAPI) read(src io.Reader, out io.Writer) ([]byte, error) {
	var body bytes.Buffer
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			rt.mu.Lock()
			if rt.firstByte.IsZero() {
				rt.firstByte = time.Now()
			}
			rt.mu.Unlock()
			body.Write(buf[:n])
			if _, werr := out.Write(buf[:n]); werr != nil {
				out = io.Discard
			}
		}
		if errors.Is(err, io.EOF) {
			return body.Bytes(), nil
		}
		if err != nil {
			return body.Bytes(), err
		}
	}
}

func (rt *runtimeAPI) timings() (init, run, first time.Duration) {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	if !rt.firstNext.IsZero() {
		init = rt.firstNext.Sub(rt.start)
	}
	if !rt.servedAt.IsZero() && rt.answered.After(rt.servedAt) {
		run = rt.answered.Sub(rt.servedAt)
	}
	if !rt.servedAt.IsZero() && rt.firstByte.After(rt.servedAt) {
		first = rt.firstByte.Sub(rt.servedAt)
	}
	return init, run, first
}

func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

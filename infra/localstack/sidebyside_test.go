package localstack_test

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	dbtypes "github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/agentorch/agentorch/infra/localstack"
	"github.com/agentorch/agentorch/infra/sam"
	"github.com/agentorch/agentorch/shared/platform"
)

// With no environment, make dev's stand-ins are where platform's local defaults look for them; the
// variables move each one.
func TestDevPorts(t *testing.T) {
	for _, v := range []string{localstack.EnvDynamoDBPort, localstack.EnvSQSPort, localstack.EnvS3Port, localstack.EnvOpenSearchPort, localstack.EnvAPIPort} {
		t.Setenv(v, "")
	}
	p, err := localstack.DevPorts()
	if err != nil {
		t.Fatal(err)
	}
	if want := (localstack.Ports{DynamoDB: 8000, SQS: 4576, S3: 4569, OpenSearch: 9200}); p != want {
		t.Errorf("DevPorts() = %+v, want %+v", p, want)
	}
	want := localstack.Endpoints{DynamoDB: platform.LocalDynamoEndpoint, SQS: platform.LocalSQSEndpoint, S3: platform.LocalS3Endpoint,
		OpenSearch: platform.LocalOpenSearchEndpoint}
	if got := p.Endpoints(); got != want {
		t.Errorf("default endpoints = %+v, want platform's %+v", got, want)
	}
	api, err := localstack.DevAPIPort()
	if err != nil || api != 3000 {
		t.Errorf("DevAPIPort() = %d, %v; want 3000", api, err)
	}
	if got, want := localstack.DevKeyFile("/r", api), filepath.Join("/r", ".cache", "dev-api-key"); got != want {
		t.Errorf("key file on the default port = %s, want %s", got, want)
	}
	if got, want := localstack.DevKeyFile("/r", 3001), filepath.Join("/r", ".cache", "dev-api-key-3001"); got != want {
		t.Errorf("key file on 3001 = %s, want %s", got, want)
	}

	t.Setenv(localstack.EnvDynamoDBPort, "8001")
	t.Setenv(localstack.EnvSQSPort, "4577")
	t.Setenv(localstack.EnvS3Port, "4570")
	t.Setenv(localstack.EnvOpenSearchPort, "9201")
	t.Setenv(localstack.EnvAPIPort, "3001")
	if p, err = localstack.DevPorts(); err != nil {
		t.Fatal(err)
	}
	if want := (localstack.Ports{DynamoDB: 8001, SQS: 4577, S3: 4570, OpenSearch: 9201}); p != want {
		t.Errorf("DevPorts() = %+v, want %+v", p, want)
	}
	if got := p.Endpoints().SQS; got != "http://127.0.0.1:4577" {
		t.Errorf("SQS endpoint = %s", got)
	}
	if api, err = localstack.DevAPIPort(); err != nil || api != 3001 {
		t.Errorf("DevAPIPort() = %d, %v; want 3001", api, err)
	}

	for _, bad := range []string{"x", "0", "-1", "65536", "80 "} {
		t.Setenv(localstack.EnvS3Port, bad)
		if _, err := localstack.DevPorts(); err == nil || !strings.Contains(err.Error(), localstack.EnvS3Port) {
			t.Errorf("S3_PORT=%q: error %v, want one naming S3_PORT", bad, err)
		}
	}
}

// Two stacks run side by side on one machine, as two make dev would: the second on the ports its
// environment names. Each gets the template's resources under the same names as make dev gives
// them, and neither sees the other's data. Every stand-in of both listens on loopback only.
func TestTwoStacksSideBySide(t *testing.T) {
	root, err := localstack.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	tmpl, err := sam.Load(filepath.Join(root, "template.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	free := freePorts(t, 4)
	t.Setenv(localstack.EnvDynamoDBPort, strconv.Itoa(free[0]))
	t.Setenv(localstack.EnvSQSPort, strconv.Itoa(free[1]))
	t.Setenv(localstack.EnvS3Port, strconv.Itoa(free[2]))
	t.Setenv(localstack.EnvOpenSearchPort, strconv.Itoa(free[3]))
	second, err := localstack.DevPorts()
	if err != nil {
		t.Fatal(err)
	}

	ctx := context.Background()
	opts := []localstack.Options{
		{Root: root}, // any free ports
		{Root: root, DynamoPort: second.DynamoDB, SQSPort: second.SQS, S3Port: second.S3, OpenSearchPort: second.OpenSearch},
	}
	stacks := make([]*localstack.Stack, len(opts))
	errs := make([]error, len(opts))
	var wg sync.WaitGroup
	for i, o := range opts {
		wg.Add(1)
		go func() {
			defer wg.Done()
			stacks[i], errs[i] = localstack.Start(ctx, o)
		}()
	}
	wg.Wait()
	for i, st := range stacks {
		if st != nil {
			t.Cleanup(func() {
				if err := st.Stop(); err != nil {
					t.Errorf("stack %d: %v", i, err)
				}
			})
		}
	}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("stack %d: %v", i, err)
		}
	}
	if got, want := stacks[1].Endpoints(), second.Endpoints(); got != want {
		t.Fatalf("second stack at %+v, want the ports of its environment %+v", got, want)
	}

	awsCfg := localstack.AWSConfig()
	for i, st := range stacks {
		ep := st.Endpoints()
		for _, u := range []string{ep.DynamoDB, ep.SQS, ep.S3, ep.OpenSearch} {
			assertLoopbackOnly(t, u)
		}
		res, err := localstack.CreateResources(ctx, awsCfg, ep, tmpl, "")
		if err != nil {
			t.Fatalf("stack %d: %v", i, err)
		}
		names, err := res.Local()
		if err != nil {
			t.Fatal(err)
		}
		mark := fmt.Sprintf("stack %d", i)
		if _, err := ep.DynamoDBClient(awsCfg).PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(names.Table), Item: map[string]dbtypes.AttributeValue{
			"pk": &dbtypes.AttributeValueMemberS{Value: "side"}, "sk": &dbtypes.AttributeValueMemberS{Value: "side"},
			"mark": &dbtypes.AttributeValueMemberS{Value: mark},
		}}); err != nil {
			t.Fatal(err)
		}
		if _, err := ep.SQSClient(awsCfg).SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: aws.String(names.QueueURL), MessageBody: aws.String(mark)}); err != nil {
			t.Fatal(err)
		}
		if _, err := ep.S3Client(awsCfg).PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(names.Bucket), Key: aws.String("side"), Body: strings.NewReader(mark)}); err != nil {
			t.Fatal(err)
		}
		req, _ := http.NewRequestWithContext(ctx, http.MethodPut, ep.OpenSearch+"/side/_doc/1?refresh=true", strings.NewReader(`{"mark":"`+mark+`"}`))
		req.Header.Set("Content-Type", "application/json")
		if body := do(t, req); !strings.Contains(body, `"result"`) {
			t.Fatalf("stack %d: index a document: %s", i, body)
		}
	}

	for i, st := range stacks {
		ep := st.Endpoints()
		res, err := localstack.CreateResources(ctx, awsCfg, ep, tmpl, "") // idempotent: finds what it made
		if err != nil {
			t.Fatal(err)
		}
		names, err := res.Local()
		if err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprintf("stack %d", i)

		item, err := ep.DynamoDBClient(awsCfg).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(names.Table), ConsistentRead: aws.Bool(true),
			Key: map[string]dbtypes.AttributeValue{"pk": &dbtypes.AttributeValueMemberS{Value: "side"}, "sk": &dbtypes.AttributeValueMemberS{Value: "side"}}})
		if err != nil {
			t.Fatal(err)
		}
		if got, _ := item.Item["mark"].(*dbtypes.AttributeValueMemberS); got == nil || got.Value != want {
			t.Errorf("stack %d: DynamoDB item mark = %v, want %q", i, item.Item["mark"], want)
		}

		var msgs []string
		for len(msgs) < 2 {
			out, err := ep.SQSClient(awsCfg).ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(names.QueueURL), MaxNumberOfMessages: 10, WaitTimeSeconds: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) == 0 {
				break
			}
			for _, m := range out.Messages {
				msgs = append(msgs, aws.ToString(m.Body))
			}
		}
		if len(msgs) != 1 || msgs[0] != want {
			t.Errorf("stack %d: queue holds %q, want only %q", i, msgs, want)
		}

		obj, err := ep.S3Client(awsCfg).GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(names.Bucket), Key: aws.String("side")})
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(obj.Body)
		_ = obj.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("stack %d: S3 object = %q, want %q", i, got, want)
		}

		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, ep.OpenSearch+"/side/_doc/1", nil)
		if body := do(t, req); !strings.Contains(body, `"mark":"`+want+`"`) {
			t.Errorf("stack %d: OpenSearch document = %s, want mark %q", i, body, want)
		}
	}
}

// The stack this test binary shares (make test's, or its own) listens on loopback only.
func TestStandInsListenOnLoopbackOnly(t *testing.T) {
	ep, ok := localstack.TestEndpoints()
	if !ok {
		t.Fatal("no stack")
	}
	for _, u := range []string{ep.DynamoDB, ep.SQS, ep.S3, ep.OpenSearch} {
		assertLoopbackOnly(t, u)
	}
}

// assertLoopbackOnly fails unless the port of endpoint has a listening socket in this network
// namespace and every such socket is bound to a loopback address (as /proc/net/tcp and tcp6 say:
// 0.0.0.0 or :: would take connections from the network too).
func assertLoopbackOnly(t *testing.T, endpoint string) {
	t.Helper()
	u, err := url.Parse(endpoint)
	if err != nil {
		t.Fatal(err)
	}
	port, err := strconv.Atoi(u.Port())
	if err != nil {
		t.Fatalf("%s: %v", endpoint, err)
	}
	addrs := listening(t, port)
	if len(addrs) == 0 {
		t.Errorf("%s: no listening socket on port %d in /proc/net/tcp or tcp6", endpoint, port)
	}
	for _, a := range addrs {
		if !a.IsLoopback() {
			t.Errorf("%s: listens on %s, not on loopback only", endpoint, a)
		}
	}
}

// listening returns the local addresses of the sockets in state LISTEN on port.
func listening(t *testing.T, port int) []net.IP {
	t.Helper()
	var out []net.IP
	for _, file := range []string{"/proc/net/tcp", "/proc/net/tcp6"} {
		f, err := os.Open(file)
		if err != nil {
			t.Fatalf("%v (this test reads Linux's socket tables)", err)
		}
		sc := bufio.NewScanner(f)
		sc.Scan() // header
		for sc.Scan() {
			fields := strings.Fields(sc.Text())
			if len(fields) < 4 || fields[3] != "0A" { // 0A: TCP_LISTEN
				continue
			}
			ip, p, err := procAddr(fields[1])
			if err != nil {
				t.Fatalf("%s: %q: %v", file, fields[1], err)
			}
			if p == port {
				out = append(out, ip)
			}
		}
		err = sc.Err()
		_ = f.Close()
		if err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	return out
}

// procAddr decodes a local_address of /proc/net/tcp{,6}: the address as 32-bit words in the
// machine's byte order, in hex, a colon, the port in hex.
func procAddr(s string) (net.IP, int, error) {
	h, p, ok := strings.Cut(s, ":")
	if !ok {
		return nil, 0, fmt.Errorf("no colon")
	}
	raw, err := hex.DecodeString(h)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return nil, 0, fmt.Errorf("address %q", h)
	}
	ip := make(net.IP, len(raw))
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(ip[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	port, err := strconv.ParseUint(p, 16, 16)
	if err != nil {
		return nil, 0, fmt.Errorf("port %q", p)
	}
	return ip, int(port), nil
}

func TestProcAddr(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("the fixtures below are little-endian")
	}
	for _, c := range []struct {
		in       string
		ip       string
		port     int
		loopback bool
	}{
		{"0100007F:1F40", "127.0.0.1", 8000, true},
		{"00000000:11D0", "0.0.0.0", 4560, false},
		{"00000000000000000000000000000000:1F40", "::", 8000, false},
		{"0000000000000000FFFF00000100007F:1F40", "127.0.0.1", 8000, true}, // ::ffff:127.0.0.1, as Java binds
		{"00000000000000000000000001000000:23F0", "::1", 9200, true},
		{"0A00020F:0050", "15.2.0.10", 80, false},
	} {
		ip, port, err := procAddr(c.in)
		if err != nil {
			t.Errorf("%s: %v", c.in, err)
			continue
		}
		if ip.String() != c.ip || port != c.port || ip.IsLoopback() != c.loopback {
			t.Errorf("%s = %s port %d loopback %t, want %s port %d loopback %t", c.in, ip, port, ip.IsLoopback(), c.ip, c.port, c.loopback)
		}
	}
}

// freePorts returns n distinct ports free on loopback at the time of the call.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	var ls []net.Listener
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	for _, l := range ls {
		_ = l.Close()
	}
	return ports
}

func do(t *testing.T, req *http.Request) string {
	t.Helper()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = res.Body.Close() }()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// The socket tables are read right: a listener on every interface is told from one on loopback.
func TestListeningReadsSocketTables(t *testing.T) {
	for _, c := range []struct {
		addr     string
		loopback bool
	}{{":0", false}, {"127.0.0.1:0", true}} {
		l, err := net.Listen("tcp", c.addr)
		if err != nil {
			t.Fatal(err)
		}
		addrs := listening(t, l.Addr().(*net.TCPAddr).Port)
		_ = l.Close()
		if len(addrs) != 1 || addrs[0].IsLoopback() != c.loopback {
			t.Errorf("listening on %s: /proc says %v, want one address with loopback %t", c.addr, addrs, c.loopback)
		}
	}
}

package localstack

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"

	"github.com/agentorch/agentorch/shared/platform"
)

// The environment variables that move make dev's stand-ins off platform's local defaults, so that
// a second stack runs beside the first (with PORT for the API). make invoke reads them too, to
// find the stack it runs a function against.
const (
	EnvDynamoDBPort   = "DYNAMODB_PORT"
	EnvSQSPort        = "SQS_PORT"
	EnvS3Port         = "S3_PORT"
	EnvOpenSearchPort = "OPENSEARCH_PORT"
	// EnvAPIPort is the dev server's own port.
	EnvAPIPort = "PORT"
)

// Ports are the ports of a stack's stand-ins, all on Host.
type Ports struct {
	DynamoDB, SQS, S3, OpenSearch int
}

// Endpoints are the base URLs of stand-ins listening on p.
func (p Ports) Endpoints() Endpoints {
	u := func(port int) string { return "http://" + net.JoinHostPort(Host, strconv.Itoa(port)) }
	return Endpoints{DynamoDB: u(p.DynamoDB), SQS: u(p.SQS), S3: u(p.S3), OpenSearch: u(p.OpenSearch)}
}

// DevPorts are the ports of make dev's stand-ins: those of platform's local endpoints (DynamoDB
// 8000, SQS 4576, S3 4569, OpenSearch 9200), where `go run` and `go test` of anything find the
// stack with no environment, each unless its variable names another.
func DevPorts() (Ports, error) {
	var p Ports
	var errs []error
	for _, v := range []struct {
		env, local string
		dst        *int
	}{
		{EnvDynamoDBPort, platform.LocalDynamoEndpoint, &p.DynamoDB},
		{EnvSQSPort, platform.LocalSQSEndpoint, &p.SQS},
		{EnvS3Port, platform.LocalS3Endpoint, &p.S3},
		{EnvOpenSearchPort, platform.LocalOpenSearchEndpoint, &p.OpenSearch},
	} {
		var err error
		if s := os.Getenv(v.env); s != "" {
			*v.dst, err = portNumber(s)
		} else {
			*v.dst, err = urlPort(v.local)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", v.env, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Ports{}, err
	}
	return p, nil
}

// DevAPIPort is the dev server's port: PORT, or that of platform's local public base URL (3000).
func DevAPIPort() (int, error) {
	if s := os.Getenv(EnvAPIPort); s != "" {
		p, err := portNumber(s)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", EnvAPIPort, err)
		}
		return p, nil
	}
	return urlPort(platform.LocalPublicBaseURL)
}

// DevKeyFile is where make dev writes the API key of its run and make invoke reads it:
// .cache/dev-api-key for the API on its default port, .cache/dev-api-key-<port> on another, so
// that a second stack beside the first leaves the first's key in place.
func DevKeyFile(repoRoot string, apiPort int) string {
	name := "dev-api-key"
	if def, err := urlPort(platform.LocalPublicBaseURL); err != nil || apiPort != def {
		name += "-" + strconv.Itoa(apiPort)
	}
	return filepath.Join(repoRoot, ".cache", name)
}

func portNumber(s string) (int, error) {
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Errorf("port %q is not a number from 1 to 65535", s)
	}
	return p, nil
}

func urlPort(raw string) (int, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return 0, fmt.Errorf("platform's local endpoint %q: %w", raw, err)
	}
	return portNumber(u.Port())
}

// Command apikey manages API keys in the table the configuration names; with no environment that
// is the local stack of make dev:
//
//	go run ./scripts/apikey create --owner O --company C [--name N] [--ttl 24h] [--rate-limit N] [--scopes a,b]
//	go run ./scripts/apikey list --company C
//	go run ./scripts/apikey revoke --company C --id ID
//
// create prints only the new key on stdout, so that KEY=$(go run ./scripts/apikey create …)
// works; everything else goes to stderr. With TABLE_NAME set (and no AWS_ENDPOINT_URL_DYNAMODB),
// or with --aws, it works on the deployed table with the SDK's usual credentials.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
)

const usage = `usage:
  apikey create --owner O --company C [--name N] [--ttl 24h] [--rate-limit N] [--scopes a,b]
  apikey list --company C [--json]
  apikey revoke --company C --id ID`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "apikey:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return errors.New(usage)
	}
	fs := flag.NewFlagSet("apikey "+args[0], flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprintln(os.Stderr, usage); fs.PrintDefaults() }
	company := fs.String("company", "", "company the key belongs to (required)")
	onAWS := fs.Bool("aws", false, "use the deployed table (TABLE_NAME) through the SDK's own endpoint and credentials")
	var cmd func(context.Context, *auth.Service) error
	switch args[0] {
	case "create":
		owner := fs.String("owner", "", "owner of the key (required)")
		name := fs.String("name", "", "a label for the key")
		ttl := fs.Duration("ttl", auth.DefaultKeyTTL, "lifetime, a Go duration (2s, 24h, 2160h)")
		rate := fs.Int("rate-limit", 0, "requests per minute; 0 means no limit")
		scopes := fs.String("scopes", "", "comma-separated scopes ("+strings.Join(domain.KnownScopes, ", ")+"); empty means all")
		cmd = func(ctx context.Context, a *auth.Service) error {
			k, secret, err := a.CreateKey(ctx, auth.NewKey{Name: *name, Owner: *owner, Company: *company, TTL: *ttl, RateLimit: *rate, Scopes: split(*scopes)})
			if err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "apikey: created key %s (%s…) for %s/%s, expires %s\n", k.ID, k.Prefix, k.Company, k.Owner, k.ExpiresAt.Format(time.RFC3339))
			_, err = fmt.Fprintln(stdout, secret)
			return err
		}
	case "list":
		asJSON := fs.Bool("json", false, "print JSON instead of a table")
		cmd = func(ctx context.Context, a *auth.Service) error {
			keys, err := a.ListKeys(ctx, *company)
			if err != nil {
				return err
			}
			if *asJSON {
				enc := json.NewEncoder(stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(keys)
			}
			return printKeys(stdout, keys)
		}
	case "revoke":
		id := fs.String("id", "", "id of the key (required)")
		cmd = func(ctx context.Context, a *auth.Service) error {
			if *id == "" {
				return errors.New("--id is required")
			}
			if err := a.RevokeKey(ctx, *company, *id); err != nil {
				return err
			}
			fmt.Fprintf(os.Stderr, "apikey: revoked %s\n", *id)
			return nil
		}
	default:
		return fmt.Errorf("unknown command %q\n%s", args[0], usage)
	}
	if err := fs.Parse(args[1:]); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", fs.Args())
	}
	if *company == "" {
		return errors.New("--company is required")
	}
	cfg, err := platform.LoadConfig()
	if err != nil {
		return err
	}
	// platform's defaults aim at the local stack; a table named in the environment without an
	// endpoint override means a deployed one.
	if *onAWS || (os.Getenv("TABLE_NAME") != "" && os.Getenv("AWS_ENDPOINT_URL_DYNAMODB") == "") {
		cfg.DynamoEndpoint = ""
	}
	where := cfg.DynamoEndpoint
	if where == "" {
		where = "AWS " + cfg.Region
	}
	fmt.Fprintf(os.Stderr, "apikey: table %s at %s\n", cfg.Table, where)
	a, err := app.New(ctx, cfg, platform.NewLogger(os.Stderr, "text", cfg.LogLevel))
	if err != nil {
		return err
	}
	err = cmd(ctx, a.Auth)
	var de *domain.Error
	if err != nil && !errors.As(err, &de) {
		// Most likely the stack is not up: say where we looked.
		if cfg.DynamoEndpoint != "" {
			return fmt.Errorf("%w (is make dev running?)", err)
		}
		return err
	}
	return err
}

func printKeys(w io.Writer, keys []*domain.APIKey) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tOWNER\tSCOPES\tRATE\tEXPIRES\tREVOKED")
	for _, k := range keys {
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.Format(time.RFC3339)
		}
		scopes := strings.Join(k.Scopes, ",")
		if scopes == "" {
			scopes = "*"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.Owner, scopes, k.RateLimit, k.ExpiresAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Command apikey manages API keys in the table the configuration names; with no environment that
// is the local stack of make dev:
//
//	go run ./scripts/apikey create --owner O --company C [--name N] [--ttl 30d] [--rate-limit N] [--monthly-tokens N] [--monthly-cost-usd X] [--scopes a,b]
//	go run ./scripts/apikey list --company C
//	go run ./scripts/apikey revoke --company C --id ID
//
// create prints only the new key on stdout, so that KEY=$(go run ./scripts/apikey create …)
// works; everything else goes to stderr. Keys made here are operator keys with no parent;
// --scopes admin makes one that manages the keys of every owner of its company. With TABLE_NAME set (and no AWS_ENDPOINT_URL_DYNAMODB),
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
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app"
	"github.com/agentorch/agentorch/shared/auth"
	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/platform"
)

const usage = `usage:
  apikey create --owner O --company C [--name N] [--ttl 30d] [--rate-limit N] [--monthly-tokens N] [--monthly-cost-usd X] [--scopes a,b]
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
		ttl := lifetime(auth.DefaultKeyTTL)
		fs.Var(&ttl, "ttl", "lifetime in days (30d) or as a Go duration (2s, 24h); at most 730d")
		rate := fs.Int("rate-limit", 0, "requests per minute; 0 means no limit")
		scopes := fs.String("scopes", "", "comma-separated scopes ("+strings.Join(domain.KnownScopes, ", ")+"); empty means all but admin")
		tokens := fs.Int64("monthly-tokens", 0, "monthly token budget (input plus output tokens per UTC month); 0 means none")
		dollars := fs.Float64("monthly-cost-usd", -1, "monthly cost budget in US dollars; absent means none")
		cmd = func(ctx context.Context, a *auth.Service) error {
			var budget domain.Budget
			if *tokens != 0 {
				budget.MonthlyTokens = tokens
			}
			if *dollars != -1 {
				budget.MonthlyCostUSD = dollars
			}
			k, secret, err := a.CreateKey(ctx, auth.NewKey{Name: *name, Owner: *owner, Company: *company, TTL: time.Duration(ttl), RateLimit: *rate,
				Budget: budget, Scopes: split(*scopes)})
			if err != nil {
				return flagError(err)
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
				return printJSON(stdout, keys)
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

func printJSON(w io.Writer, keys []*domain.APIKey) error {
	out := make([]any, len(keys))
	for i, k := range keys {
		out[i] = api.KeyView(k)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}

func printKeys(w io.Writer, keys []*domain.APIKey) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	_, _ = fmt.Fprintln(tw, "ID\tPREFIX\tNAME\tOWNER\tSCOPES\tRATE\tEXPIRES\tREVOKED\tPARENT")
	for _, k := range keys {
		revoked := "-"
		if k.RevokedAt != nil {
			revoked = k.RevokedAt.Format(time.RFC3339)
		}
		scopes := strings.Join(k.Scopes, ",")
		if scopes == "" {
			scopes = "*"
		}
		parent := "-"
		if k.ParentID != nil {
			parent = *k.ParentID
		}
		_, _ = fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", k.ID, k.Prefix, k.Name, k.Owner, scopes, k.RateLimit, k.ExpiresAt.Format(time.RFC3339), revoked, parent)
	}
	return tw.Flush()
}

// flagError names the flags behind the fields of an invalid key.
func flagError(err error) error {
	var de *domain.Error
	if !errors.As(err, &de) || len(de.Fields) == 0 {
		return err
	}
	flags := map[string]string{"expires_in": "--ttl", "rate_limit": "--rate-limit", "owner": "--owner", "company": "--company", "name": "--name",
		"limits.monthly_tokens": "--monthly-tokens", "limits.monthly_cost_usd": "--monthly-cost-usd"}
	var msgs []string
	for _, f := range de.Fields {
		name, ok := flags[f.Field]
		if !ok && strings.HasPrefix(f.Field, "scopes.") {
			name, ok = "--scopes", true
		}
		if !ok {
			name = f.Field
		}
		msgs = append(msgs, name+": "+f.Message)
	}
	return &domain.Error{Kind: domain.KindInvalid, Message: strings.Join(msgs, "; "), Fields: de.Fields}
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

// lifetime is the --ttl flag: whole days ("30d") or a Go duration ("24h").
type lifetime time.Duration

func (l *lifetime) String() string {
	d := time.Duration(*l)
	if d > 0 && d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

func (l *lifetime) Set(s string) error {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err != nil || n < 1 || n > 100_000 {
			return errors.New("give a whole number of days such as 30d")
		}
		*l = lifetime(time.Duration(n) * 24 * time.Hour)
		return nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return errors.New("give days (30d) or hours, minutes, seconds (24h, 90m, 30s)")
	}
	*l = lifetime(d)
	return nil
}

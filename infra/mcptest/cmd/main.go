// Command mcptest serves the tests' own MCP server (infra/mcptest) until interrupted:
//
//	go run ./infra/mcptest/cmd -addr 127.0.0.1:8931
//
// Its Streamable HTTP endpoint is http://ADDR/mcp; the other paths are listed at start.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/agentorch/agentorch/infra/mcptest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "mcptest:", err)
		os.Exit(1)
	}
}

func run() error {
	addr := flag.String("addr", "127.0.0.1:8931", "address to listen on")
	oauthAddr := flag.String("oauth-addr", "", "address of the same tools behind OAuth 2.1, with their authorization server (none if empty)")
	flag.Parse()
	ctx, cancel := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer cancel()
	base, stop, err := mcptest.Start(ctx, *addr)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Printf("mcptest: Streamable HTTP at %s%s (JSON answers at %s, HTTP+SSE at %s, garbage at %s, HTML at %s)\n",
		base, mcptest.PathMCP, mcptest.PathJSON, mcptest.PathSSE, mcptest.PathGarbage, mcptest.PathHTML)
	if *oauthAddr != "" {
		_, url, stopOAuth, err := mcptest.StartOAuth(ctx, *oauthAddr, "", "")
		if err != nil {
			return err
		}
		defer stopOAuth()
		fmt.Printf("mcptest: behind OAuth at %s (dynamic registration; the authorization server redirects at once)\n", url)
	}
	<-ctx.Done()
	return nil
}

package app

import (
	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/platform"
)

// Stream builds the stream function's handler: the runtime group, served behind a Lambda
// function URL in RESPONSE_STREAM mode so that an execute with ?stream=true sends each event as
// it happens on AWS too. It authenticates as every group does (API keys, bearer tokens).
func Stream(a *App) (*api.Group, error) { return Runtime(a) }

// MainHTTPStream is MainHTTP for a function behind a streaming function URL.
func MainHTTPStream(build Builder, opts ...func(*App)) { platform.MainHTTPStream(handler(build, opts)) }

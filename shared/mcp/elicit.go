package mcp

import (
	"context"
	"encoding/json"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentorch/agentorch/shared/domain"
)

// A server may ask the person behind a call for input (elicitation/create) while it handles the
// call. The connector says it can be asked (form mode) and hands each question to the elicitor
// of the call in flight (domain.ElicitorFrom of the call's context); each session has its SDK
// client, whose handler is its askSlot's. The question does not say
// which call it belongs to, so it is handed on only while one call is in flight on the session
// (a run's calls to one server in the same turn may overlap: a question then is declined, as
// is one during no call, one without an elicitor, and one in URL mode, which is not offered).

// askSlot holds the calls in flight on one session.
type askSlot struct {
	red *redactor

	mu    sync.Mutex
	calls map[*int]domain.Elicitor // nil values: calls that cannot be asked
}

func newAskSlot(red *redactor) *askSlot { return &askSlot{red: red, calls: map[*int]domain.Elicitor{}} }

// during records a call in flight under ctx until the returned func is called.
func (a *askSlot) during(ctx context.Context) func() {
	tok := new(int)
	a.mu.Lock()
	a.calls[tok] = domain.ElicitorFrom(ctx)
	a.mu.Unlock()
	return func() {
		a.mu.Lock()
		delete(a.calls, tok)
		a.mu.Unlock()
	}
}

// elicitor is the elicitor of the one call in flight, or nil.
func (a *askSlot) elicitor() domain.Elicitor {
	if a == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if len(a.calls) != 1 {
		return nil
	}
	for _, e := range a.calls {
		return e
	}
	return nil
}

// elicit answers a server's elicitation/create (sdk.ClientOptions.ElicitationHandler). An
// accepted form gets the schema's defaults for the fields it lacks (MCP 2025-11-25); the SDK
// then checks it against the schema.
func (slot *askSlot) elicit(ctx context.Context, req *sdk.ElicitRequest) (*sdk.ElicitResult, error) {
	decline := &sdk.ElicitResult{Action: domain.ElicitDecline}
	if req == nil || req.Params == nil || (req.Params.Mode != "" && req.Params.Mode != "form") {
		return decline, nil
	}
	e := slot.elicitor()
	if e == nil {
		return decline, nil
	}
	schema := map[string]any{}
	if req.Params.RequestedSchema != nil {
		b, err := json.Marshal(req.Params.RequestedSchema)
		if err != nil || json.Unmarshal(b, &schema) != nil {
			return decline, nil
		}
	}
	shown, _ := slot.red.value(schema).(map[string]any)
	a := e.Elicit(ctx, domain.Elicitation{Message: slot.red.text(req.Params.Message), Schema: shown})
	switch a.Action {
	case domain.ElicitAccept:
		return &sdk.ElicitResult{Action: a.Action, Content: domain.ElicitDefaults(schema, a.Content)}, nil
	case domain.ElicitCancel:
		return &sdk.ElicitResult{Action: a.Action}, nil
	}
	return decline, nil
}

// clientFor is the SDK client of one session, whose questions go to slot: it says it can be
// asked (form mode).
func clientFor(slot *askSlot) *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "agentorch", Version: "1.0.0"}, &sdk.ClientOptions{ElicitationHandler: slot.elicit})
}

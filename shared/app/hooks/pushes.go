package hooks

import (
	"github.com/agentorch/agentorch/shared/api/a2aserve"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/seal"
	"github.com/agentorch/agentorch/shared/sessions"
	"github.com/agentorch/agentorch/shared/webhooks"
)

type pushesKey struct{}

// Pushes is the application's store of A2A tasks' push notification configs, their tokens and
// credentials sealed under the credentials key (the runtime, stream and delivery functions read
// it).
func Pushes(a *core.App) webhooks.PushStore {
	s, _ := core.Shared(a, pushesKey{}, func() (webhooks.PushStore, error) {
		return webhooks.SealedPushes(a.Store, seal.New(a.CredentialsKey())), nil
	})
	return s
}

// A2APushes is the option that offers push notifications on the A2A endpoints when the
// deployment has a webhook queue (their deliveries ride it); none without one.
func A2APushes(a *core.App) []a2aserve.Option {
	if a.Config.WebhookQueueURL == "" {
		return nil
	}
	return []a2aserve.Option{a2aserve.WithPushes(Pushes(a), Deliverer(a), Guard(a).CheckURL)}
}

// pushingDeliverer is the delivery function's deliverer: the webhooks' deliveries and the A2A
// push notifications, whose bodies are the tasks read through the sessions feature.
func pushingDeliverer(a *core.App) *webhooks.Deliverer {
	runs := sessions.New(sessions.Deps{Store: a.Store}, sessions.Limits{})
	return Deliverer(a).WithPushes(Pushes(a), a2aserve.TaskBodies{Runs: runs})
}

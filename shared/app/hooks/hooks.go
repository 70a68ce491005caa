// Package hooks adds the company's webhooks to the core: the feature on DynamoDB, its URLs held
// to the address guard with the operator's allowed hosts (MCP_ALLOWED_HOSTS: loopback locally,
// none on AWS), the webhooks group, served by its own function, and the delivery function's
// processor on WebhookQueue.
package hooks

import (
	"context"
	"errors"

	"github.com/agentorch/agentorch/shared/api"
	"github.com/agentorch/agentorch/shared/app/core"
	"github.com/agentorch/agentorch/shared/netguard"
	"github.com/agentorch/agentorch/shared/platform"
	"github.com/agentorch/agentorch/shared/seal"
	"github.com/agentorch/agentorch/shared/sqs"
	"github.com/agentorch/agentorch/shared/webhooks"
)

type serviceKey struct{}

// Guard is the address policy of webhook URLs, at creation and at every delivery.
func Guard(a *core.App) netguard.Policy { return netguard.Policy{AllowHosts: a.Config.MCPAllowedHosts} }

// Service is the webhooks feature on the application's store. Built on first use, with no
// network call.
func Service(a *core.App) *webhooks.Service {
	s, _ := core.Shared(a, serviceKey{}, func() (*webhooks.Service, error) {
		return webhooks.New(store(a), Guard(a)).WithAudit(a.Audit), nil
	})
	return s
}

type storeKey struct{}

// store is the application's store of webhooks, their signing secrets sealed under the
// credentials key (read on the first read or write of a webhook that carries a secret: the
// webhooks and delivery functions pass secrets.Manager; the functions that only publish never
// read it).
func store(a *core.App) webhooks.Store {
	s, _ := core.Shared(a, storeKey{}, func() (webhooks.Store, error) {
		return webhooks.Sealed(a.Store, seal.New(a.CredentialsKey())), nil
	})
	return s
}

// Group builds the webhooks group: create, read, list, change and delete the company's
// webhooks, rotate their secrets, list their deliveries and redeliver one.
func Group(a *core.App) (*api.Group, error) {
	return api.NewWebhooks(Service(a), Deliverer(a), a.Options()), nil
}

type delivererKey struct{}

// Deliverer is the delivery side of webhooks on the application's store: events and deliveries
// through WebhookQueue (WEBHOOK_QUEUE_URL; without it, publishing is refused), attempts through
// the guarded client.
func Deliverer(a *core.App) *webhooks.Deliverer {
	d, _ := core.Shared(a, delivererKey{}, func() (*webhooks.Deliverer, error) {
		var q webhooks.Queue = noQueue{}
		if a.Config.WebhookQueueURL != "" {
			q = sqs.NewQueue(sqs.NewClient(a.AWS, a.Config.SQSEndpoint), a.Config.WebhookQueueURL)
		}
		return webhooks.NewDeliverer(store(a), a.Store, q, webhooks.Client(Guard(a))), nil
	})
	return d
}

// DeliveryBackoff is how soon WebhookQueue gives a failed attempt back: the feature's retry
// schedule (webhooks.RetryFloor), plus up to a quarter more.
var DeliveryBackoff = platform.Backoff{Base: webhooks.RetryBase, Max: webhooks.RetryMax}

// Delivery builds the delivery function's processor: it fans events out to the subscribed
// webhooks and makes their attempts; a failed attempt comes back after DeliveryBackoff.
func Delivery(a *core.App) (func(ctx context.Context, body string) error, error) {
	process := pushingDeliverer(a).Process
	if a.Config.WebhookQueueURL == "" {
		return process, nil
	}
	redrive := sqs.NewRedrive(sqs.NewClient(a.AWS, a.Config.SQSEndpoint), a.Config.WebhookQueueURL)
	return platform.RedriveSoon(process, redrive, DeliveryBackoff), nil
}

// noQueue refuses to send: the deployment has no webhook queue.
type noQueue struct{}

func (noQueue) Send(context.Context, string, string) error {
	return errors.New("webhooks: no delivery queue configured (WEBHOOK_QUEUE_URL)")
}

package webhookstest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/agentorch/agentorch/shared/domain"
)

// Deliveries is the in-memory fake of webhooks.DeliveryStore.
type Deliveries struct {
	mu   sync.Mutex
	dels map[string]*domain.WebhookDelivery // by company/webhook/id
}

// NewDeliveries returns an empty delivery store.
func NewDeliveries() *Deliveries { return &Deliveries{dels: map[string]*domain.WebhookDelivery{}} }

func cloneDelivery(d *domain.WebhookDelivery) *domain.WebhookDelivery {
	c := *d
	c.Payload = slices.Clone(d.Payload)
	c.Attempts = slices.Clone(d.Attempts)
	if c.Attempts == nil {
		c.Attempts = []domain.WebhookAttempt{}
	}
	return &c
}

// CreateDelivery implements webhooks.DeliveryStore.
func (f *Deliveries) CreateDelivery(_ context.Context, d *domain.WebhookDelivery) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	k := d.Company + "/" + d.WebhookID + "/" + d.ID
	if _, ok := f.dels[k]; ok {
		return fmt.Errorf("delivery %s: %w", d.ID, domain.ErrConflict)
	}
	f.dels[k] = cloneDelivery(d)
	return nil
}

// GetDelivery implements webhooks.DeliveryStore.
func (f *Deliveries) GetDelivery(_ context.Context, company, webhookID, id string) (*domain.WebhookDelivery, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.dels[company+"/"+webhookID+"/"+id]
	if !ok {
		return nil, domain.ErrNotFound
	}
	return cloneDelivery(d), nil
}

// AddAttempt implements webhooks.DeliveryStore.
func (f *Deliveries) AddAttempt(_ context.Context, company, webhookID, id string, a domain.WebhookAttempt, status string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	d, ok := f.dels[company+"/"+webhookID+"/"+id]
	if !ok {
		return domain.ErrNotFound
	}
	d.Attempts = append(d.Attempts, a)
	d.Status = status
	return nil
}

// ListDeliveries implements webhooks.DeliveryStore: newest first (ids are time-ordered within an
// event; CreatedAt orders the rest).
func (f *Deliveries) ListDeliveries(_ context.Context, company, webhookID string, offset, limit int) ([]*domain.WebhookDelivery, bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var all []*domain.WebhookDelivery
	for _, d := range f.dels {
		if d.Company == company && d.WebhookID == webhookID {
			all = append(all, cloneDelivery(d))
		}
	}
	sort.Slice(all, func(i, j int) bool {
		if !all[i].CreatedAt.Equal(all[j].CreatedAt) {
			return all[i].CreatedAt.After(all[j].CreatedAt)
		}
		return all[i].ID > all[j].ID
	})
	if offset >= len(all) {
		return []*domain.WebhookDelivery{}, false, nil
	}
	end := min(offset+limit, len(all))
	return all[offset:end], end < len(all), nil
}

package knowledge

import (
	"context"
	"fmt"

	"github.com/agentorch/agentorch/shared/domain"
)

// Events tells a company's webhooks that an ingestion run of a knowledge base ended
// (webhooks.Deliverer.Publish: one queue message, no store call, the fan-out to the subscribed
// webhooks done by the delivery function).
type Events interface {
	Publish(ctx context.Context, ev domain.WebhookEvent) error
}

// runEvents are the webhook events of a run's final statuses.
var runEvents = map[string]string{
	domain.KBCompleted: domain.EventIngestionCompleted,
	domain.KBFailed:    domain.EventIngestionFailed,
}

// publish tells the company's webhooks that kb's run ended with kb's status: the knowledge
// base's id, the run's id and the status, never content. It is called once the write that ended
// the run succeeded (a superseded run's write conflicts and publishes nothing), so a redelivery
// that finds the run ended already publishes nothing more. Its failure is not the run's (the
// run is recorded; an error would have SQS deliver the job again): the event is lost.
func (s *Service) publish(ctx context.Context, kb *domain.KnowledgeBase) {
	typ, ok := runEvents[kb.Status]
	if s.d.Events == nil || !ok || kb.Company == "" {
		return
	}
	_ = s.d.Events.Publish(context.WithoutCancel(ctx), domain.WebhookEvent{Type: typ, Company: kb.Company,
		Data: map[string]string{"knowledge_base_id": kb.ID, "run_id": kb.RunID, "status": kb.Status}})
}

// unreadable is the dead-letter processor's answer to a job whose knowledge base it cannot read
// (err): before the run's deadline err, so that the queue delivers the job again; past it, the
// run counts as failed (the read that settles it will record so), and the company's webhooks
// are told from the job's own company and ids: nil once published, the publish's error (tried
// again) otherwise. A job written before jobs carried their company and deadline keeps being
// tried.
func (s *Service) unreadable(ctx context.Context, j job, err error) error {
	if s.d.Events == nil || j.Company == "" || j.Deadline == nil || !s.now().After(*j.Deadline) {
		return err
	}
	ev := domain.WebhookEvent{Type: domain.EventIngestionFailed, Company: j.Company,
		Data: map[string]string{"knowledge_base_id": j.KBID, "run_id": j.RunID, "status": domain.KBFailed}}
	if perr := s.d.Events.Publish(context.WithoutCancel(ctx), ev); perr != nil {
		return fmt.Errorf("%w; telling its webhooks the run failed: %w", err, perr)
	}
	return nil
}

package webhooks

import (
	"fmt"
	"net/url"
	"slices"
	"unicode/utf8"

	"github.com/agentorch/agentorch/shared/domain"
	"github.com/agentorch/agentorch/shared/netguard"
)

// Limits of a webhook.
const (
	MaxURLLength         = 2048
	MaxDescriptionLength = 500
)

// fieldErrs collects what is wrong with an input, by field, in the order found.
type fieldErrs []domain.FieldError

func (e *fieldErrs) add(field, format string, args ...any) {
	*e = append(*e, domain.FieldError{Field: field, Message: fmt.Sprintf(format, args...)})
}

// CreateInput is POST /api/v1/webhooks/ {url, events, description?, enabled?}. URL and events
// are pointers so that a missing one is told from an empty one.
type CreateInput struct {
	URL         *string   `json:"url"`
	Events      *[]string `json:"events" want:"an array of event names"`
	Description string    `json:"description"`
	Enabled     *bool     `json:"enabled"` // nil: enabled
}

// Validate lists what is wrong with a creation's values, in the order of its fields; the URL is
// held to guard's rules.
func (in *CreateInput) Validate(guard netguard.Policy) []domain.FieldError {
	var errs fieldErrs
	if in.URL == nil {
		errs.add("url", "is required")
	} else {
		checkURL(*in.URL, guard, &errs)
	}
	if in.Events == nil {
		errs.add("events", "is required")
	} else {
		checkEvents(*in.Events, &errs)
	}
	checkDescription(in.Description, &errs)
	return errs
}

// UpdateInput is PATCH /api/v1/webhooks/{id}/: a field left out is left as it is; null
// description clears it; url, events and enabled cannot be null.
type UpdateInput struct {
	URL         domain.Optional[string]   `json:"url"`
	Events      domain.Optional[[]string] `json:"events" want:"an array of event names"`
	Description domain.Optional[string]   `json:"description"`
	Enabled     domain.Optional[bool]     `json:"enabled"`
}

// Validate lists what is wrong with a change's values, in the order of its fields.
func (in *UpdateInput) Validate(guard netguard.Policy) []domain.FieldError {
	var errs fieldErrs
	if in.URL.Null {
		errs.add("url", "must be a string, not null (leave it out to keep it)")
	} else if in.URL.Set {
		checkURL(in.URL.Value, guard, &errs)
	}
	if in.Events.Null {
		errs.add("events", "must be an array, not null (leave it out to keep it)")
	} else if in.Events.Set {
		checkEvents(in.Events.Value, &errs)
	}
	checkDescription(in.Description.Value, &errs)
	if in.Enabled.Null {
		errs.add("enabled", "must be a boolean, not null (leave it out to keep it)")
	}
	return errs
}

// checkURL accepts an absolute http(s) URL that the address guard does not refuse before a
// connection (internal hosts and addresses, credentials); where its name resolves is checked
// again at every delivery.
func checkURL(raw string, guard netguard.Policy, errs *fieldErrs) {
	if len(raw) > MaxURLLength {
		errs.add("url", "must be at most %d characters", MaxURLLength)
		return
	}
	u, err := url.Parse(raw)
	switch {
	case err != nil || raw == "" || !u.IsAbs():
		errs.add("url", "must be an absolute http or https URL")
	case u.Fragment != "":
		errs.add("url", "must not have a fragment")
	default:
		if err := guard.CheckURL(u); err != nil {
			errs.add("url", "is not allowed: %s", reason(err))
		}
	}
}

// reason is the guard's refusal without its sentinel's prefix.
func reason(err error) string {
	msg := err.Error()
	if p := netguard.ErrForbiddenDestination.Error() + ": "; len(msg) > len(p) && msg[:len(p)] == p {
		return msg[len(p):]
	}
	return msg
}

func checkEvents(events []string, errs *fieldErrs) {
	if len(events) == 0 {
		errs.add("events", "must name at least one event")
		return
	}
	for i, e := range events {
		if !slices.Contains(domain.WebhookEvents, e) {
			errs.add(fmt.Sprintf("events.%d", i), "must be one of %v, not %q", domain.WebhookEvents, domain.Clip(e, 60))
		}
	}
}

func checkDescription(d string, errs *fieldErrs) {
	if utf8.RuneCountInString(d) > MaxDescriptionLength {
		errs.add("description", "must be at most %d characters", MaxDescriptionLength)
	}
}

// dedupe is events without repeats, in the order first named.
func dedupe(events []string) []string {
	out := make([]string, 0, len(events))
	for _, e := range events {
		if !slices.Contains(out, e) {
			out = append(out, e)
		}
	}
	return out
}

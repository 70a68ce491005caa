package api

import (
	"time"

	"github.com/agentorch/agentorch/shared/domain"
)

// feedbackJSON is a feedback as the API shows it.
type feedbackJSON struct {
	ID        string    `json:"id"`
	MessageID string    `json:"message"`
	SessionID string    `json:"session_id"`
	User      string    `json:"user"`
	Rating    *int      `json:"rating"`
	Comment   *string   `json:"comment"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

func viewFeedback(f *domain.Feedback) feedbackJSON {
	return feedbackJSON{ID: f.ID, MessageID: f.MessageID, SessionID: f.SessionID, User: f.User, Rating: f.Rating,
		Comment: f.Comment, CreatedAt: f.CreatedAt, UpdatedAt: f.UpdatedAt}
}

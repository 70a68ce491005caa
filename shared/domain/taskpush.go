package domain

import "time"

// TaskPush is where an A2A client asked the updates of one of its tasks (an execution) to be
// pushed: its URL, the token it checks each notification by (X-A2A-Notification-Token), and the
// credentials of the Authorization header when its authentication names the bearer scheme. The
// token and credentials are sealed at rest.
type TaskPush struct {
	ID          string // the client's config id; the task id when it gave none
	Company     string
	Owner       string // the owner of the key that set it, whose session the task is in
	SessionID   string
	ExecutionID string
	URL         string
	Token       string
	Schemes     []string // the authentication's schemes, as the client gave them
	Credentials string
	CreatedAt   time.Time
}

// MaxTaskPushes bounds the push configs of one task.
const MaxTaskPushes = 10

// EventTaskPush is the queue event that pushes an A2A task's state to its push configs alone
// (no webhook subscribes to it): sent when a config is set on a task that had already ended or
// paused, whose execution event may have been fanned out before the config was stored.
const EventTaskPush = "a2a.task_push"

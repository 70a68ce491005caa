// Operations → Webhooks: the company's webhooks (create with the contract's events, the signing
// secret shown once; edit, enable or disable, rotate the secret, delete), and one webhook's
// deliveries with their status, HTTP status, attempts and times, each deliverable again.
import { useEffect, useState } from 'preact/hooks'
import { api, page } from './api'
import { describedBy, errorsAt, FieldErr, FormError, type OpsProps, useAnswered, type Webhook, type WebhookDelivery, type WebhookEvent, type WebhookWithSecret } from './ops'
import { ROOT } from './router'
import { Confirm, ErrorBox, Section, Spinner, usePaged, when } from './ui'

/** Every event of the contract with what it tells (a new event in the contract fails the build until it is here). */
const EVENTS = {
  'execution.completed': 'an execution ended with an answer',
  'execution.failed': 'an execution failed',
  'execution.requires_action': 'an execution paused for an approval or a function result',
  'execution.cancelled': 'an execution was cancelled',
  'knowledge_base.ingestion.completed': 'a knowledge base finished ingesting',
  'knowledge_base.ingestion.failed': 'a knowledge base failed to ingest',
} satisfies Record<WebhookEvent, string>
const EVENT_NAMES = Object.keys(EVENTS) as WebhookEvent[]

export function Webhooks({ rest }: OpsProps) {
  return rest[0] ? <Deliveries id={rest[0]} /> : <HookList />
}

/** The event checkboxes of a form; prefix names their test ids. */
function EventPicks({ events, onChange, prefix, error, form }: { events: WebhookEvent[]; onChange: (e: WebhookEvent[]) => void; prefix: string; error: unknown; form: string }) {
  return (
    <fieldset aria-describedby={describedBy(error, form, 'events')}>
      <legend>Events to be told of</legend>
      {EVENT_NAMES.map((ev) => (
        // A label per line (not label.check's inline-flex, which cannot wrap): the longest event name fits a phone.
        <label key={ev} data-testid={prefix + '-event'}>
          <input type="checkbox" value={ev} checked={events.includes(ev)}
            onChange={(e) => onChange(e.currentTarget.checked ? [...events, ev] : events.filter((x) => x !== ev))} />
          <code>{ev}</code> <small>{EVENTS[ev]}</small>
        </label>
      ))}
      <FieldErr error={error} path="events" form={form} />
    </fieldset>
  )
}

/** A signing secret shown this once, with a copy button. */
function Secret({ shown }: { shown: { url: string; secret: string; rotated: boolean } }) {
  const [copied, setCopied] = useState(false)
  return (
    <div class="secret" role="status">
      <p>{shown.rotated
        ? <>The new signing secret of {shown.url}, shown this once. For 24 hours the previous one signs beside it, so the receiver can switch without losing a delivery.</>
        : <>The signing secret of {shown.url}, shown this once: the receiver checks each delivery&apos;s <code>webhook-signature</code> with it.</>}</p>
      <code data-testid="hook-secret">{shown.secret}</code>{' '}
      <button type="button" onClick={() => navigator.clipboard?.writeText(shown.secret).then(() => setCopied(true))}>{copied ? 'Copied' : 'Copy'}</button>
    </div>
  )
}

function HookList() {
  const [reload, setReload] = useState(0)
  const list = usePaged<Webhook>('webhooks/', 20, '', reload)
  const answered = useAnswered(list.loading)
  const [form, setForm] = useState({ url: '', description: '', events: ['execution.completed', 'execution.failed'] as WebhookEvent[] })
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [rowError, setRowError] = useState<unknown>(null)
  const [shown, setShown] = useState<{ id: string; url: string; secret: string; rotated: boolean } | null>(null)
  const [editing, setEditing] = useState<Webhook | null>(null)

  async function create(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    setShown(null)
    try {
      const body: Record<string, unknown> = { url: form.url, events: form.events }
      if (form.description) body.description = form.description
      const h = await api<WebhookWithSecret>('POST', 'webhooks/', body)
      setShown({ id: h.id, url: h.url, secret: h.secret, rotated: false })
      setForm({ ...form, url: '', description: '' })
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  async function act(f: () => Promise<void>) {
    setRowError(null)
    try {
      await f()
      setReload((n) => n + 1)
    } catch (err) {
      setRowError(err)
    }
  }
  const toggle = (h: Webhook) => act(async () => { await api('PATCH', `webhooks/${h.id}/`, { enabled: !h.enabled }) })
  const rotate = (h: Webhook) => act(async () => {
    const r = await api<WebhookWithSecret>('POST', `webhooks/${h.id}/rotate-secret/`)
    setShown({ id: r.id, url: r.url, secret: r.secret, rotated: true })
  })
  const remove = (h: Webhook) => act(async () => {
    await api('DELETE', `webhooks/${h.id}/`)
    if (shown?.id === h.id) setShown(null)
    if (editing?.id === h.id) setEditing(null)
  })
  return (
    <Section title="Webhooks">
      <p class="hint">Each webhook is told of the events it picks by a signed POST (Standard Webhooks; see docs/webhooks.md). Open one to see its deliveries.</p>
      <ErrorBox error={list.error} />
      {/* Three rows' space, always: the form below does not move as the list loads. */}
      <div class="hold-table">
        <table class="grid">
          <thead><tr><th>URL</th><th>Events</th><th>State</th><th>Created</th><th>Actions</th></tr></thead>
          <tbody>
            {list.items.map((h) => (
              <tr key={h.id} data-testid="hook-row" data-id={h.id}>
                <td class="wrap"><a href={`${ROOT}ops/webhooks/${h.id}`} data-testid="hook-open" aria-label={`Deliveries of ${h.url}`}>{h.url}</a>{h.description && <><br /><small>{h.description}</small></>}</td>
                <td><small>{h.events.join(', ')}</small></td>
                <td data-testid="hook-state" data-enabled={String(h.enabled)}>{h.enabled ? 'enabled' : 'disabled'}{h.disabled_reason ? `: ${h.disabled_reason}` : ''}</td>
                <td>{when(h.created_at)}</td>
                <td class="actions">
                  <button type="button" data-testid="hook-edit" aria-label={`Edit ${h.url}`} onClick={() => setEditing(h)}>Edit</button>{' '}
                  <button type="button" data-testid="hook-toggle" aria-label={`${h.enabled ? 'Disable' : 'Enable'} ${h.url}`} onClick={() => toggle(h)}>{h.enabled ? 'Disable' : 'Enable'}</button>{' '}
                  <Confirm label="Rotate secret" name={`Rotate secret of ${h.url}`} testid="hook-rotate" question="Give it a new signing secret? The old one keeps signing beside it for 24 hours." onConfirm={() => rotate(h)} />{' '}
                  <Confirm label="Delete" name={`Delete ${h.url}`} testid="hook-delete" question={`Delete the webhook to ${h.url}? Its queued deliveries stop.`} onConfirm={() => remove(h)} />
                </td>
              </tr>
            ))}
            {answered && list.items.length === 0 && !list.error && (
              <tr class="empty" data-testid="empty"><td colSpan={5}>No webhooks yet. Add one below with the URL of your receiver and the events it should be told of.</td></tr>
            )}
          </tbody>
        </table>
      </div>
      {list.pager}
      <ErrorBox error={rowError} />
      {shown && <Secret shown={shown} />}
      {editing && <EditHook key={editing.id} hook={editing} onDone={(saved) => { setEditing(null); if (saved) setReload(reload + 1) }} />}
      <form onSubmit={create} class="editor" noValidate>
        <h3>New webhook</h3>
        <div class="row">
          <div class="field"><label>URL <input data-testid="hook-url" type="url" value={form.url} placeholder="https://…/hooks/agentorch" required
            aria-describedby={describedBy(error, 'hook', 'url')} aria-invalid={errorsAt(error, 'url').length > 0}
            onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} /></label>
          <FieldErr error={error} path="url" form="hook" /></div>
          <div class="field"><label>Description <input data-testid="hook-description" value={form.description} placeholder="optional"
            aria-describedby={describedBy(error, 'hook', 'description')} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} /></label>
          <FieldErr error={error} path="description" form="hook" /></div>
        </div>
        <EventPicks events={form.events} onChange={(events) => setForm({ ...form, events })} prefix="hook" error={error} form="hook" />
        <button type="submit" data-testid="hook-create" disabled={busy}>Create webhook</button>
        {busy && <Spinner label="Creating" />}
        <FormError error={error} fields={['url', 'events', 'description']} />
      </form>
    </Section>
  )
}

/** The edit form of a webhook: URL, description, events and whether it is on. */
function EditHook({ hook, onDone }: { hook: Webhook; onDone: (saved: boolean) => void }) {
  const [form, setForm] = useState({ url: hook.url, description: hook.description, events: hook.events, enabled: hook.enabled })
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  async function save(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const body: Record<string, unknown> = {}
      if (form.url !== hook.url) body.url = form.url
      if (form.description !== hook.description) body.description = form.description || null
      if (form.events.join() !== hook.events.join()) body.events = form.events
      if (form.enabled !== hook.enabled) body.enabled = form.enabled
      await api('PATCH', `webhooks/${hook.id}/`, body)
      onDone(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form onSubmit={save} class="editor" data-testid="hook-editor" noValidate>
      <h3>Edit the webhook to {hook.url}</h3>
      <div class="row">
        <div class="field"><label>URL <input data-testid="hook-edit-url" type="url" value={form.url} required aria-describedby={describedBy(error, 'hook-edit', 'url')}
          onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} /></label>
        <FieldErr error={error} path="url" form="hook-edit" /></div>
        <div class="field"><label>Description <input data-testid="hook-edit-description" value={form.description} aria-describedby={describedBy(error, 'hook-edit', 'description')} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} /></label>
        <FieldErr error={error} path="description" form="hook-edit" /></div>
      </div>
      <EventPicks events={form.events} onChange={(events) => setForm({ ...form, events })} prefix="hook-edit" error={error} form="hook-edit" />
      <label class="check"><input type="checkbox" checked={form.enabled} onChange={(e) => setForm({ ...form, enabled: e.currentTarget.checked })} /> Enabled</label>
      <div>
        <button type="submit" data-testid="hook-save" disabled={busy}>Save</button>{' '}
        <button type="button" onClick={() => onDone(false)}>Cancel</button>
        {busy && <Spinner label="Saving" />}
      </div>
      <FormError error={error} fields={['url', 'events', 'description']} />
    </form>
  )
}

const PAGE = 20

/**
 * One webhook's deliveries, newest first. While the screen is open they are read again every
 * 3 s without a spinner (a delivery goes from pending to its end within seconds), so a page
 * shows what happens without a reload and without moving.
 */
function Deliveries({ id }: { id: string }) {
  const [hook, setHook] = useState<Webhook | null>(null)
  const [items, setItems] = useState<WebhookDelivery[] | null>(null)
  const [next, setNext] = useState(false)
  const [offset, setOffset] = useState(0)
  const [error, setError] = useState<unknown>(null)
  const [tick, setTick] = useState(0)
  useEffect(() => {
    api<Webhook>('GET', `webhooks/${encodeURIComponent(id)}/`).then(setHook, setError)
  }, [id])
  useEffect(() => {
    let live = true
    page<WebhookDelivery>(`webhooks/${encodeURIComponent(id)}/deliveries/`, PAGE, offset)
      .then((p) => { if (live) { setItems(p.items); setNext(p.next); setError(null) } }, (e) => live && setError(e))
    const t = setTimeout(() => setTick((n) => n + 1), 3000)
    return () => { live = false; clearTimeout(t) }
  }, [id, offset, tick])
  async function redeliver(d: WebhookDelivery) {
    try {
      const again = await api<WebhookDelivery>('POST', `webhooks/${encodeURIComponent(id)}/deliveries/${encodeURIComponent(d.id)}/redeliver/`)
      setItems((xs) => xs?.map((x) => (x.id === d.id ? again : x)) ?? null)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <Section title={hook ? `Deliveries to ${hook.url}` : 'Deliveries'} actions={<a href={ROOT + 'ops/webhooks'} data-testid="hook-back">All webhooks</a>}>
      <p class="hint" data-testid="hook-detail">
        {hook ? <>{hook.enabled ? 'Enabled' : 'Disabled'}{hook.disabled_reason ? ` (${hook.disabled_reason})` : ''} · events: {hook.events.join(', ')} · </> : null}
        The last 30 days, newest first, read again every few seconds.
      </p>
      <ErrorBox error={error} />
      <div class={items === null ? 'hold-table' : undefined}>
        <table class="grid">
          <thead><tr><th>Event</th><th>Status</th><th>HTTP</th><th>Attempts</th><th>Created</th><th>Last attempt</th><th>Actions</th></tr></thead>
          <tbody>
            {(items ?? []).map((d) => {
              const last = d.attempts[d.attempts.length - 1]
              return (
                <tr key={d.id} data-testid="delivery-row" data-id={d.id} data-status={d.status}>
                  <td><code>{d.event_type}</code><br /><small>{d.id}</small></td>
                  <td data-testid="delivery-status" class={d.status === 'failed' ? 'error' : d.status === 'succeeded' ? 'ok' : undefined}>{d.status}</td>
                  <td data-testid="delivery-code">{last ? (last.status_code ?? 'no answer') : '—'}</td>
                  <td>
                    <details>
                      <summary data-testid="delivery-attempts">{d.attempts.length} {d.attempts.length === 1 ? 'attempt' : 'attempts'}</summary>
                      <ol class="attempts">
                        {d.attempts.map((a, i) => (
                          <li key={i} data-testid="delivery-attempt">
                            {when(a.at)}: {a.status_code ?? 'no answer'} in {a.duration_ms} ms{a.error ? ` · ${a.error}` : ''}{a.next_retry_at ? ` · next try ${when(a.next_retry_at)}` : ''}
                          </li>
                        ))}
                      </ol>
                    </details>
                  </td>
                  <td>{when(d.created_at)}</td>
                  <td>{last ? when(last.at) : 'not yet'}{last?.next_retry_at ? <><br /><small>next try {when(last.next_retry_at)}</small></> : null}</td>
                  <td><button type="button" data-testid="delivery-redeliver" aria-label={`Redeliver ${d.id}`} onClick={() => redeliver(d)}>Redeliver</button></td>
                </tr>
              )
            })}
            {items !== null && items.length === 0 && (
              <tr class="empty" data-testid="empty"><td colSpan={7}>No deliveries yet. They appear here when one of its events happens: run an agent in the playground to cause an <code>execution.completed</code>.</td></tr>
            )}
          </tbody>
        </table>
      </div>
      <div class="pager" role="group" aria-label="Pages">
        <button type="button" disabled={offset === 0} onClick={() => setOffset(Math.max(0, offset - PAGE))}>Previous</button>
        <span>{items && items.length ? `${offset + 1}–${offset + items.length}` : ''}</span>
        <button type="button" disabled={!next} onClick={() => setOffset(offset + PAGE)}>Next</button>
        <button type="button" data-testid="deliveries-refresh" onClick={() => setTick((n) => n + 1)}>Refresh</button>
      </div>
    </Section>
  )
}

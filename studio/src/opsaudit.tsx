// Operations → Audit log: the company's admin actions, newest first, a page at a time (GET
// /audit/, admin only), kept to one action, one acting key and a time window as the API offers,
// the filters in the address (?action=&key=&from=&to=, times as typed, local) so that a reload or
// a shared link keeps them; the acting key and the target shown by name where the studio can list
// them, times for people.
import { describedBy, FieldErr, Forbidden, FormError, keyLabel, useAnswered, useNames, type AuditAction, type AuditEntry, type OpsProps } from './ops'
import { navigate, ROOT } from './router'
import { Section, usePaged, when } from './ui'

/** Every action of the contract, for people (a new action in the contract fails the build until it is here). */
const ACTIONS = {
  'api_key.created': 'API key created',
  'api_key.revoked': 'API key revoked',
  'mcp_server.created': 'MCP server registered',
  'mcp_server.updated': 'MCP server changed',
  'mcp_server.deleted': 'MCP server deleted',
  'agent.deleted': 'Agent deleted',
  'webhook.created': 'Webhook created',
  'webhook.updated': 'Webhook changed',
  'webhook.deleted': 'Webhook deleted',
  'webhook.secret_rotated': 'Webhook secret rotated',
  'limits.updated': 'Limits changed',
} satisfies Record<AuditAction, string>

const rtf = new Intl.RelativeTimeFormat(undefined, { numeric: 'auto' })

/** How long ago t was, for people: "2 minutes ago", "yesterday". */
function ago(t: string): string {
  const s = (Date.parse(t) - Date.now()) / 1000
  const steps: [number, Intl.RelativeTimeFormatUnit][] = [[60, 'second'], [3600, 'minute'], [86400, 'hour'], [2592000, 'day'], [31536000, 'month']]
  for (const [lim, unit] of steps) {
    if (Math.abs(s) < lim) {
      const div = unit === 'second' ? 1 : unit === 'minute' ? 60 : unit === 'hour' ? 3600 : unit === 'day' ? 86400 : 2592000
      return rtf.format(Math.round(s / div), unit)
    }
  }
  return rtf.format(Math.round(s / 31536000), 'year')
}

/** A datetime-local value (the browser's local time) as RFC 3339, or "" when empty or not a time. */
function rfc3339(local: string): string {
  if (!local) return ''
  const t = new Date(local)
  return isNaN(t.getTime()) ? '' : t.toISOString()
}

export function Audit({ query }: OpsProps) {
  const action = query.get('action') ?? '', key = query.get('key') ?? ''
  const from = query.get('from') ?? '', to = query.get('to') ?? ''
  const names = useNames()
  const q = [['action', action], ['key_id', key], ['from', rfc3339(from)], ['to', rfc3339(to)]].filter(([, v]) => v).map(([k, v]) => `&${k}=${encodeURIComponent(v)}`).join('')
  function set(name: string, value: string) {
    const u = new URLSearchParams(query)
    if (value) u.set(name, value)
    else u.delete(name)
    const s = u.toString()
    navigate(ROOT + 'ops/audit' + (s ? '?' + s : ''))
  }
  const list = usePaged<AuditEntry>('audit/', 25, q)
  const answered = useAnswered(list.loading)
  const filtered = q !== ''
  function target(e: AuditEntry): string {
    switch (e.target_type) {
      case 'api_key': return keyLabel(names.keys, e.target_id)
      case 'agent': return names.agents.get(e.target_id)?.name ?? `agent ${e.target_id.slice(0, 8)}`
      case 'limits': return 'the company'
      case 'webhook': return `webhook ${e.target_id.slice(0, 8)}`
      default: return `MCP server ${e.target_id.slice(0, 8)}`
    }
  }
  return (
    <Section title="Audit log">
      <p class="hint">Who changed what: keys, MCP servers, agents deleted, webhooks and limits, newest first, kept 90 days. Times are yours ({Intl.DateTimeFormat().resolvedOptions().timeZone}).</p>
      <form class="row" aria-label="Filters" onSubmit={(e) => e.preventDefault()}>
        <label>Action <select data-testid="audit-action" value={action} onChange={(e) => set('action', e.currentTarget.value)}>
          <option value="">Every action</option>
          {(Object.keys(ACTIONS) as AuditAction[]).map((a) => <option key={a} value={a}>{ACTIONS[a]}</option>)}
        </select></label>
        <div class="field"><label>By <select data-testid="audit-key" value={key} aria-describedby={describedBy(list.error, 'audit', 'key_id')} onChange={(e) => set('key', e.currentTarget.value)}>
          <option value="">Every key</option>
          {[...names.keys.values()].map((k) => <option key={k.id} value={k.id}>{keyLabel(names.keys, k.id)}</option>)}
          {key && !names.keys.has(key) && <option value={key}>{keyLabel(names.keys, key)}</option>}
        </select></label>
          <FieldErr error={list.error} path="key_id" form="audit" /></div>
        <div class="field"><label>From <input data-testid="audit-from" type="datetime-local" value={from} aria-describedby={describedBy(list.error, 'audit', 'from')} onChange={(e) => set('from', e.currentTarget.value)} /></label>
          <FieldErr error={list.error} path="from" form="audit" /></div>
        <div class="field"><label>Before <input data-testid="audit-to" type="datetime-local" value={to} aria-describedby={describedBy(list.error, 'audit', 'to')} onChange={(e) => set('to', e.currentTarget.value)} /></label>
          <FieldErr error={list.error} path="to" form="audit" /></div>
        <button type="button" data-testid="audit-clear" disabled={!filtered} onClick={() => navigate(ROOT + 'ops/audit')}>Clear filters</button>
      </form>
      <Forbidden error={list.error} scope="admin"><FormError error={list.error} fields={['from', 'to', 'action', 'key_id']} /></Forbidden>
      <div class={!answered && list.items.length === 0 ? 'hold-table' : undefined}>
        <table class="grid" tabIndex={0} aria-label="Audit entries">
          <thead><tr><th>When</th><th>Action</th><th>By</th><th>Target</th></tr></thead>
          <tbody>
            {list.items.map((e) => (
              <tr key={e.id} data-testid="audit-row" data-action={e.action}>
                <td data-testid="audit-time"><time dateTime={e.created_at} title={e.created_at}>{when(e.created_at)}</time><br /><small>{ago(e.created_at)}</small></td>
                <td>{ACTIONS[e.action] ?? e.action}<br /><small><code>{e.action}</code></small></td>
                <td data-testid="audit-actor">{keyLabel(names.keys, e.actor_key_id)}{e.via_token ? <><br /><small>through a sign-in token</small></> : null}</td>
                <td data-testid="audit-target">{target(e)}</td>
              </tr>
            ))}
            {answered && !list.error && list.items.length === 0 && (
              <tr class="empty" data-testid="empty"><td colSpan={4}>{filtered
                ? 'Nothing matches these filters. Clear them, or widen the time window, to see more entries.'
                : 'No admin actions yet. Creating keys, webhooks or MCP servers, or changing limits, is recorded here.'}</td></tr>
            )}
          </tbody>
        </table>
      </div>
      {list.pager}
    </Section>
  )
}

// Settings: API keys (create with expiry, scopes and rate limit; the secret shown once; revoke)
// and MCP servers (register with headers, edit, delete; their tools and status).
import { useState } from 'preact/hooks'
import { api, hasKey, keyInfo, unlock, type ApiKey, type ApiKeyCreated, type MCPServer, type MCPTools } from './api'
import { authorizeServer, useOAuthReturns } from './oauth'
import { Confirm, ErrorBox, Section, Spinner, usePaged, when } from './ui'


const SCOPES = ['agents:read', 'agents:write', 'sessions:read', 'sessions:write', 'approvals:write', 'knowledge:read', 'knowledge:write', 'keys:manage']

export function Settings() {
  return <div class="stack"><Keys /><Servers /></div>
}

const DAY = 86_400_000

/**
 * How long a new key may live: a key never outlives the key creating it (shared/auth), so the
 * limit is the signed-in key's expiry, read from its token; days is the whole days left before it.
 */
function keyLimit(): { expiresAt: number; days: number } | null {
  const k = keyInfo()
  return k ? { expiresAt: k.expiresAt, days: Math.min(730, Math.floor((k.expiresAt - Date.now()) / DAY)) } : null
}

function Keys() {
  const [reload, setReload] = useState(0)
  const list = usePaged<ApiKey>('api-keys/', 20, '', reload)
  const [limit] = useState(keyLimit)
  const [name, setName] = useState('')
  // 30 days, or (empty) until the signed-in key expires when that is sooner.
  const [days, setDays] = useState(!limit || limit.days >= 30 ? '30' : '')
  const [rate, setRate] = useState('')
  // The key's own monthly budgets (limits.monthly_tokens, limits.monthly_cost_usd); empty: none.
  const [budget, setBudget] = useState({ tokens: '', cost: '' })
  const [scopes, setScopes] = useState<string[]>([])
  // The secret shown once, with the id of its key: revoking that key (or one that created it) hides it.
  const [secret, setSecret] = useState<{ id: string; key: string } | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [copied, setCopied] = useState(false)
  const [unlocked, setUnlocked] = useState(hasKey())
  const [unlockKey, setUnlockKey] = useState('')
  const [unlockError, setUnlockError] = useState<unknown>(null)

  async function create(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    setSecret(null)
    try {
      const body: Record<string, unknown> = { name, scopes }
      if (days !== '') body.expires_in = Math.round(Number(days) * 86400)
      else if (limit) body.expires_at = new Date(limit.expiresAt).toISOString()
      if (rate !== '') body.rate_limit = Number(rate)
      if (budget.tokens !== '' || budget.cost !== '') {
        body.limits = { ...(budget.tokens !== '' ? { monthly_tokens: Number(budget.tokens) } : {}), ...(budget.cost !== '' ? { monthly_cost_usd: Number(budget.cost) } : {}) }
      }
      // A bearer token may not create keys: this one request carries the API key itself.
      const k = await api<ApiKeyCreated>('POST', 'api-keys/', body, { useKey: true })
      setSecret({ id: k.id, key: k.key })
      setName('')
      setCopied(false)
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  async function doUnlock(e: Event) {
    e.preventDefault()
    setUnlockError(null)
    try {
      await unlock(unlockKey)
      setUnlockKey('')
      setUnlocked(true)
    } catch (err) {
      setUnlockError(err)
    }
  }
  /** Whether revoking the key of id ends the key shown: it is that key or one that created it. */
  function ends(id: string): boolean {
    const byID = new Map(list.items.map((k) => [k.id, k]))
    for (let at: string | null | undefined = secret?.id; at; at = byID.get(at)?.parent_id) {
      if (at === id) return true
    }
    return false
  }
  async function revoke(k: ApiKey) {
    try {
      await api('DELETE', `api-keys/${k.id}/`)
      if (ends(k.id)) setSecret(null)
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <Section title="API keys">
      <ErrorBox error={list.error} />
      <div class="hold-table"><table class="grid">
        <thead><tr><th>Name</th><th>Prefix</th><th>Owner</th><th>Scopes</th><th>Rate</th><th>Expires</th><th>Actions</th></tr></thead>
        <tbody>
          {list.items.map((k) => (
            <tr key={k.id} data-testid="key-row">
              <td>{k.name}</td><td><code>{k.prefix}</code></td><td>{k.owner}</td><td>{k.scopes.join(', ') || 'all'}</td>
              <td>{k.rate_limit || '—'}</td><td>{when(k.expires_at)}</td>
              <td>{k.revoked_at ? <span>revoked {when(k.revoked_at)}</span> : <Confirm label="Revoke" name={`Revoke ${k.name}`} testid="key-revoke" question={`Revoke ${k.prefix}…? Its tokens and the keys it created stop working.`} onConfirm={() => revoke(k)} />}</td>
            </tr>
          ))}
          {!list.loading && list.items.length === 0 && <tr class="empty" data-testid="empty"><td colSpan={7}>No keys to show. Create one below for each program that calls the API.</td></tr>}
        </tbody>
      </table></div>
      {list.pager}
      {!unlocked && (
        <form onSubmit={doUnlock} class="editor" data-testid="key-locked">
          <h3>Unlock key creation</h3>
          <p class="notice" id="key-locked-why">Creating a key needs your API key itself: a sign-in token may not create keys, and after a reload this tab keeps only the token. Enter your key again to create keys (it stays in this page&apos;s memory only).</p>
          <div class="row">
            <label>Your API key <input data-testid="key-unlock-input" type="password" autoComplete="off" spellcheck={false} placeholder="ak_…" value={unlockKey} onInput={(e) => setUnlockKey(e.currentTarget.value)} required /></label>
          </div>
          <button type="submit" data-testid="key-unlock" disabled={!unlockKey.trim()}>Unlock</button>
          <ErrorBox error={unlockError} />
        </form>
      )}
      <form onSubmit={create} class="editor">
        <h3>New key</h3>
        <div class="row">
          <label>Name <input data-testid="key-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required /></label>
          <label>Expires in (days) <input data-testid="key-expires" type="number" min="1" max={limit ? limit.days : 730} value={days} placeholder={limit ? 'with my key' : '90'}
            aria-describedby="key-expiry-limit" disabled={!!limit && limit.days < 1} onInput={(e) => setDays(e.currentTarget.value)} /></label>
          <label>Rate limit (per minute) <input type="number" min="0" value={rate} placeholder="as mine" onInput={(e) => setRate(e.currentTarget.value)} /></label>
          <label>Monthly tokens <input data-testid="key-budget-tokens" type="number" min="1" value={budget.tokens} placeholder="as mine" onInput={(e) => setBudget({ ...budget, tokens: e.currentTarget.value })} /></label>
          <label>Monthly cost (USD) <input data-testid="key-budget-cost" type="number" min="0" step="any" value={budget.cost} placeholder="as mine" onInput={(e) => setBudget({ ...budget, cost: e.currentTarget.value })} /></label>
        </div>
        <p class="hint" id="key-expiry-limit" data-testid="key-expiry-limit">
          {limit
            ? <>A key cannot outlive the key creating it: yours expires {when(limit.expiresAt / 1000)}, so at most {limit.days} days. Empty: the new key expires with yours.</>
            : <>At most 730 days. Empty: 90 days.</>}
        </p>
        <fieldset class="row">
          <legend>Scopes (none: all of mine)</legend>
          {SCOPES.map((s) => (
            <label key={s} class="check"><input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} /> {s}</label>
          ))}
        </fieldset>
        <button type="submit" data-testid="key-create" disabled={busy || !unlocked} aria-describedby={unlocked ? undefined : 'key-locked-why'}>Create key</button>
        {busy && <Spinner label="Creating" />}
        <ErrorBox error={error} />
      </form>
      {secret && (
        <div class="secret" role="status">
          <p>The new key, shown this once:</p>
          <code data-testid="key-secret">{secret.key}</code>{' '}
          <button type="button" onClick={() => navigator.clipboard?.writeText(secret.key).then(() => setCopied(true))}>{copied ? 'Copied' : 'Copy'}</button>
        </div>
      )}
    </Section>
  )
}

/** A header of an MCP server as the form holds it: its value is a secret, written and never shown back. */
interface Header { name: string; value: string }

function headerMap(rows: Header[]): Record<string, string> {
  return Object.fromEntries(rows.filter((h) => h.name.trim()).map((h) => [h.name.trim(), h.value]))
}

/** Rows of header names and their (write-only) values; prefix names their test ids. */
function HeaderRows({ rows, onChange, prefix }: { rows: Header[]; onChange: (rows: Header[]) => void; prefix: string }) {
  const set = (i: number, h: Partial<Header>) => onChange(rows.map((r, j) => (j === i ? { ...r, ...h } : r)))
  return (
    <fieldset>
      <legend>Headers (their values are secrets: sent to the server, never shown again)</legend>
      {rows.map((h, i) => (
        <div class="row" key={i}>
          <label>Header name <input data-testid={`${prefix}-header-name`} value={h.name} placeholder="Authorization" required onInput={(e) => set(i, { name: e.currentTarget.value })} /></label>
          <label>Value <input data-testid={`${prefix}-header-value`} type="password" autoComplete="off" spellcheck={false} value={h.value} required onInput={(e) => set(i, { value: e.currentTarget.value })} /></label>
          <button type="button" aria-label={`Remove header ${h.name || i + 1}`} onClick={() => onChange(rows.filter((_, j) => j !== i))}>Remove</button>
        </div>
      ))}
      <button type="button" data-testid={`${prefix}-header-add`} onClick={() => onChange([...rows, { name: '', value: '' }])}>Add header</button>
    </fieldset>
  )
}

/**
 * The edit form of a registered server: name, URL, description, and its headers, whose values are
 * never shown: left alone they are kept; replaced, the whole set is given again (PATCH replaces
 * the map; none left removes them all).
 */
function EditServer({ server, onDone }: { server: MCPServer; onDone: (saved: boolean) => void }) {
  const [form, setForm] = useState({ name: server.name, url: server.url, description: server.description })
  const [replace, setReplace] = useState(false)
  const [rows, setRows] = useState<Header[]>([])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  function toggle(on: boolean) {
    setReplace(on)
    setRows(on ? server.header_names.map((name) => ({ name, value: '' })) : [])
  }
  async function save(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const body: Record<string, unknown> = {}
      if (form.name !== server.name) body.name = form.name
      if (form.url !== server.url) body.url = form.url
      if (form.description !== server.description) body.description = form.description
      if (replace) body.headers = headerMap(rows)
      await api('PATCH', `mcp-servers/${server.id}/`, body)
      onDone(true)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form onSubmit={save} class="editor" data-testid="mcp-editor">
      <h3>Edit {server.name}</h3>
      <div class="row">
        <label>Name <input data-testid="mcp-edit-name" value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} required /></label>
        <label>URL <input data-testid="mcp-edit-url" type="url" value={form.url} onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} required /></label>
      </div>
      <label>Description <input value={form.description} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} /></label>
      <p class="hint" data-testid="mcp-header-names">{server.header_names.length ? `Headers set: ${server.header_names.join(', ')} (values hidden).` : 'No headers set.'}</p>
      <label><input type="checkbox" data-testid="mcp-headers-replace" checked={replace} onChange={(e) => toggle(e.currentTarget.checked)} /> Replace the headers (give every value again; none left removes them all)</label>
      {replace && <HeaderRows rows={rows} onChange={setRows} prefix="mcp-edit" />}
      <button type="submit" data-testid="mcp-save" disabled={busy}>Save</button>{' '}
      <button type="button" onClick={() => onDone(false)}>Cancel</button>
      {busy && <Spinner label="Saving" />}
      <ErrorBox error={error} />
    </form>
  )
}

function Servers() {
  const [reload, setReload] = useState(0)
  const list = usePaged<MCPServer>('mcp-servers/', 20, '', reload)
  const empty = { name: '', url: '', description: '', oauth: false, grant: 'authorization_code', client_id: '', client_secret: '' }
  const [form, setForm] = useState(empty)
  const [headers, setHeaders] = useState<Header[]>([])
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [tools, setTools] = useState<{ id: string; server: string; tools: MCPTools['tools'] } | null>(null)
  const [editing, setEditing] = useState<MCPServer | null>(null)
  useOAuthReturns((err) => { setError(err); setReload((n) => n + 1) })

  async function register(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const { oauth, grant, client_id, client_secret, ...rest } = form
      const auth = oauth ? { type: 'oauth', grant, ...(client_id ? { client_id } : {}), ...(client_secret ? { client_secret } : {}) } : undefined
      const hs = headerMap(headers)
      await api('POST', 'mcp-servers/', { ...rest, ...(Object.keys(hs).length ? { headers: hs } : {}), ...(auth ? { auth } : {}) })
      setForm(empty)
      setHeaders([])
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  async function show(s: MCPServer) {
    try {
      const t = await api<MCPTools>('GET', `mcp-servers/${s.id}/tools/`)
      setTools({ id: s.id, server: s.name, tools: t.tools })
    } catch (err) {
      setError(err)
    }
  }
  // Connect while the server waits for a person (auth_required, no token yet); a connected one
  // can be authorized again (other scopes, another account): Reconnect.
  const connectLabel = (s: MCPServer) => (s.status !== 'auth_required' && s.auth?.authorized ? 'Reconnect' : 'Connect')
  async function authorize(s: MCPServer) {
    setError(null)
    try {
      await authorizeServer(s)
    } catch (err) {
      setError(err)
    }
  }
  async function refresh(s: MCPServer) {
    try {
      await api('POST', `mcp-servers/${s.id}/refresh/`)
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    }
  }
  async function remove(s: MCPServer) {
    setError(null)
    try {
      await api('DELETE', `mcp-servers/${s.id}/`)
      if (editing?.id === s.id) setEditing(null)
      if (tools?.id === s.id) setTools(null)
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <Section title="MCP servers">
      <ErrorBox error={list.error} />
      <ul class="list">
        {list.items.map((s) => (
          <li key={s.id} data-testid="mcp-row">
            <strong>{s.name}</strong> <small>{s.url} · <span data-testid="mcp-status" data-status={s.status}>{s.status}</span>{s.last_error ? `: ${s.last_error}` : ''} · {s.tool_count} tools{s.header_names.length ? ` · headers: ${s.header_names.join(', ')}` : ''}</small>{' '}
            <button type="button" data-testid="mcp-tools" aria-label={`Tools of ${s.name}`} onClick={() => show(s)}>Tools</button>{' '}
            <button type="button" data-testid="mcp-refresh" aria-label={`Refresh ${s.name}`} onClick={() => refresh(s)}>Refresh</button>{' '}
            <button type="button" data-testid="mcp-edit" aria-label={`Edit ${s.name}`} onClick={() => setEditing(s)}>Edit</button>{' '}
            <Confirm label="Delete" name={`Delete ${s.name}`} testid="mcp-delete" question={`Delete ${s.name}? Agents that use it can no longer call its tools.`} onConfirm={() => remove(s)} />
            {s.auth?.grant === 'authorization_code' && <>{' '}<button type="button" data-testid="mcp-authorize" aria-label={`${connectLabel(s)} ${s.name}`} onClick={() => authorize(s)}>{connectLabel(s)}</button></>}
          </li>
        ))}
        {!list.loading && list.items.length === 0 && <li class="empty" data-testid="empty">No MCP servers yet. Register one below by its URL; its tools can then be given to agents.</li>}
      </ul>
      {list.pager}
      {editing && <EditServer key={editing.id} server={editing} onDone={(saved) => { setEditing(null); if (saved) setReload(reload + 1) }} />}
      {tools && (
        <div aria-live="polite">
          <h3>Tools of {tools.server}</h3>
          <ul>{tools.tools.map((t) => <li key={t.name} data-testid="mcp-tool"><code>{t.name}</code> {t.description}</li>)}</ul>
        </div>
      )}
      <form onSubmit={register} class="editor">
        <h3>Register a server</h3>
        <div class="row">
          <label>Name <input data-testid="mcp-name" value={form.name} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} required /></label>
          <label>URL <input data-testid="mcp-url" type="url" value={form.url} placeholder="https://…/mcp" onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} required /></label>
        </div>
        <label>Description <input value={form.description} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} /></label>
        <HeaderRows rows={headers} onChange={setHeaders} prefix="mcp" />
        <label><input type="checkbox" data-testid="mcp-oauth" checked={form.oauth} onChange={(e) => setForm({ ...form, oauth: e.currentTarget.checked })} /> OAuth 2.1 (the server asks for it)</label>
        {form.oauth && (
          <div class="row">
            <label>Grant <select value={form.grant} onChange={(e) => setForm({ ...form, grant: e.currentTarget.value })}>
              <option value="authorization_code">A person authorizes (authorization code)</option>
              <option value="client_credentials">The service itself (client credentials)</option>
            </select></label>
            <label>Client id <input value={form.client_id} placeholder="none: registered dynamically" onInput={(e) => setForm({ ...form, client_id: e.currentTarget.value })} /></label>
            <label>Client secret <input type="password" autocomplete="off" value={form.client_secret} onInput={(e) => setForm({ ...form, client_secret: e.currentTarget.value })} /></label>
          </div>
        )}
        <button type="submit" data-testid="mcp-register" disabled={busy}>Register</button>
        {busy && <Spinner label="Connecting" />}
        <ErrorBox error={error} />
      </form>
    </Section>
  )
}

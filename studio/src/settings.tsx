// Settings: API keys (create with expiry, scopes and rate limit; the secret shown once; revoke)
// and MCP servers (register; their tools and status).
import { useState } from 'preact/hooks'
import { api, hasKey, type ApiKey, type ApiKeyCreated, type MCPServer, type MCPTools } from './api'
import { authorizeServer, useOAuthReturns } from './oauth'
import { Confirm, ErrorBox, Section, Spinner, usePaged, when } from './ui'


const SCOPES = ['agents:read', 'agents:write', 'sessions:read', 'sessions:write', 'approvals:write', 'knowledge:read', 'knowledge:write', 'keys:manage']

export function Settings() {
  return <div class="stack"><Keys /><Servers /></div>
}

function Keys() {
  const [reload, setReload] = useState(0)
  const list = usePaged<ApiKey>('api-keys/', 20, '', reload)
  const [name, setName] = useState('')
  const [days, setDays] = useState('30')
  const [rate, setRate] = useState('')
  const [scopes, setScopes] = useState<string[]>([])
  const [secret, setSecret] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [copied, setCopied] = useState(false)

  async function create(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    setSecret('')
    try {
      const body: Record<string, unknown> = { name, expires_in: Math.round(Number(days) * 86400), scopes }
      if (rate !== '') body.rate_limit = Number(rate)
      // A bearer token may not create keys: this one request carries the API key itself.
      const k = await api<ApiKeyCreated>('POST', 'api-keys/', body, { useKey: true })
      setSecret(k.key)
      setName('')
      setCopied(false)
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  async function revoke(k: ApiKey) {
    try {
      await api('DELETE', `api-keys/${k.id}/`)
      setReload(reload + 1)
    } catch (err) {
      setError(err)
    }
  }
  return (
    <Section title="API keys">
      <ErrorBox error={list.error} />
      <table class="grid">
        <thead><tr><th>Name</th><th>Prefix</th><th>Owner</th><th>Scopes</th><th>Rate</th><th>Expires</th><th><span class="sr-only">Actions</span></th></tr></thead>
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
      </table>
      {list.pager}
      <form onSubmit={create} class="editor">
        <h3>New key</h3>
        {!hasKey() && <p class="notice">Creating a key needs your API key (a token may not): sign out and in again to create keys.</p>}
        <div class="row">
          <label>Name <input data-testid="key-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required /></label>
          <label>Expires in (days) <input type="number" min="1" max="730" value={days} onInput={(e) => setDays(e.currentTarget.value)} required /></label>
          <label>Rate limit (per minute) <input type="number" min="0" value={rate} placeholder="as mine" onInput={(e) => setRate(e.currentTarget.value)} /></label>
        </div>
        <fieldset class="row">
          <legend>Scopes (none: all of mine)</legend>
          {SCOPES.map((s) => (
            <label key={s} class="check"><input type="checkbox" checked={scopes.includes(s)} onChange={(e) => setScopes(e.currentTarget.checked ? [...scopes, s] : scopes.filter((x) => x !== s))} /> {s}</label>
          ))}
        </fieldset>
        <button type="submit" data-testid="key-create" disabled={busy || !hasKey()}>Create key</button>
        {busy && <Spinner label="Creating" />}
        <ErrorBox error={error} />
      </form>
      {secret && (
        <div class="secret" role="status">
          <p>The new key, shown this once:</p>
          <code data-testid="key-secret">{secret}</code>{' '}
          <button type="button" onClick={() => navigator.clipboard?.writeText(secret).then(() => setCopied(true))}>{copied ? 'Copied' : 'Copy'}</button>
        </div>
      )}
    </Section>
  )
}

function Servers() {
  const [reload, setReload] = useState(0)
  const list = usePaged<MCPServer>('mcp-servers/', 20, '', reload)
  const empty = { name: '', url: '', description: '', oauth: false, grant: 'authorization_code', client_id: '', client_secret: '' }
  const [form, setForm] = useState(empty)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [tools, setTools] = useState<{ server: string; tools: MCPTools['tools'] } | null>(null)
  useOAuthReturns((err) => { setError(err); setReload((n) => n + 1) })

  async function register(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const { oauth, grant, client_id, client_secret, ...rest } = form
      const auth = oauth ? { type: 'oauth', grant, ...(client_id ? { client_id } : {}), ...(client_secret ? { client_secret } : {}) } : undefined
      await api('POST', 'mcp-servers/', auth ? { ...rest, auth } : rest)
      setForm(empty)
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
      setTools({ server: s.name, tools: t.tools })
    } catch (err) {
      setError(err)
    }
  }
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
  return (
    <Section title="MCP servers">
      <ErrorBox error={list.error} />
      <ul class="list">
        {list.items.map((s) => (
          <li key={s.id} data-testid="mcp-row">
            <strong>{s.name}</strong> <small>{s.url} · <span data-testid="mcp-status" data-status={s.status}>{s.status}</span>{s.last_error ? `: ${s.last_error}` : ''} · {s.tool_count} tools</small>{' '}
            <button type="button" data-testid="mcp-tools" aria-label={`Tools of ${s.name}`} onClick={() => show(s)}>Tools</button>{' '}
            <button type="button" data-testid="mcp-refresh" aria-label={`Refresh ${s.name}`} onClick={() => refresh(s)}>Refresh</button>
            {s.auth?.grant === 'authorization_code' && <>{' '}<button type="button" data-testid="mcp-authorize" aria-label={`Authorize ${s.name}`} onClick={() => authorize(s)}>Authorize</button></>}
          </li>
        ))}
        {!list.loading && list.items.length === 0 && <li class="empty" data-testid="empty">No MCP servers yet. Register one below by its URL; its tools can then be given to agents.</li>}
      </ul>
      {list.pager}
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

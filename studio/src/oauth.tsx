// OAuth of registered MCP servers: the Authorize button opens the authorization server in a
// window of its own; the authorization server sends that window back to /studio/oauth/callback,
// which hands code and state to the studio tab that opened it (same origin only) and closes.
// The tab posts them to the API (POST /api/v1/mcp-servers/oauth/callback/): the state and PKCE
// verifier never leave the service. Opened without such a tab (a bookmarked link, a redirect in
// the same tab), the page signs in and posts them itself.
import { useEffect, useState } from 'preact/hooks'
import { api, type MCPServer } from './api'
import { ROOT } from './router'
import type { components } from './schema'
import { ErrorBox, Spinner } from './ui'

type Authorization = components['schemas']['MCPServerAuthorization']

/** The message the callback window sends its opener. */
interface Returned { type: 'mcp-oauth-callback'; code: string; state: string; error: string }

/** Where the authorization server sends the person back: this studio's callback page. */
export function callbackURL(): string {
  return location.origin + ROOT + 'oauth/callback'
}

/** Starts the authorization of s in a window of its own. */
export async function authorizeServer(s: MCPServer): Promise<void> {
  const win = window.open('about:blank', 'mcp-oauth', 'width=640,height=760')
  try {
    const a = await api<Authorization>('POST', `mcp-servers/${s.id}/authorize/`, { redirect_uri: callbackURL() })
    if (win) win.location.href = a.authorization_url
    else location.href = a.authorization_url
  } catch (err) {
    win?.close()
    throw err
  }
}

/** Completes the authorizations that come back to this tab; done is told each result. */
export function useOAuthReturns(done: (err: unknown) => void) {
  useEffect(() => {
    const on = async (e: MessageEvent<Returned>) => {
      if (e.origin !== location.origin || e.data?.type !== 'mcp-oauth-callback') return
      try {
        if (e.data.error) throw new Error(`The authorization server answered: ${e.data.error}`)
        await api('POST', 'mcp-servers/oauth/callback/', { code: e.data.code, state: e.data.state })
        done(null)
      } catch (err) {
        done(err)
      }
    }
    addEventListener('message', on)
    return () => removeEventListener('message', on)
  }, [done])
}

/** The callback page in the window Authorize opened: hand the result over and close. */
export function relayToOpener(query: URLSearchParams): boolean {
  const opener = window.opener as Window | null
  if (!opener) return false
  try {
    if (opener.location.origin !== location.origin) return false
  } catch {
    return false // another origin's window: it gets nothing
  }
  const msg: Returned = { type: 'mcp-oauth-callback', code: query.get('code') ?? '', state: query.get('state') ?? '', error: query.get('error') ?? '' }
  opener.postMessage(msg, location.origin)
  window.close()
  return true
}

/** The callback page in a signed-in tab of its own: posts code and state, shows the result. */
export function OAuthCallback({ query }: { query: URLSearchParams }) {
  const [result, setResult] = useState<{ server?: MCPServer; error?: unknown }>({})
  useEffect(() => {
    const error = query.get('error')
    if (error) {
      setResult({ error: new Error(`The authorization server answered: ${error}`) })
      return
    }
    api<MCPServer>('POST', 'mcp-servers/oauth/callback/', { code: query.get('code') ?? '', state: query.get('state') ?? '' })
      .then((server) => setResult({ server }), (err) => setResult({ error: err }))
  }, [query.get('code'), query.get('state')])
  return (
    <section data-testid="oauth-callback">
      <h2>MCP server authorization</h2>
      {!result.server && !result.error && <Spinner label="Completing the authorization" />}
      <ErrorBox error={result.error} />
      {result.server && (
        <p data-testid="oauth-done">
          <strong>{result.server.name}</strong> is <span data-status={result.server.status}>{result.server.status}</span>
          {result.server.last_error ? `: ${result.server.last_error}` : ''} · {result.server.tool_count} tools.{' '}
          <a href={ROOT + 'settings'}>Back to the settings</a>
        </p>
      )}
    </section>
  )
}

import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { onAuth, signedIn, signIn, signOut } from './api'
import { Agents } from './agents'
import { Knowledge } from './knowledge'
import { OAuthCallback, relayToOpener } from './oauth'
import { Ops } from './ops'
import { Playground } from './playground'
import { link, ROOT, useRoute } from './router'
import { Settings } from './settings'
import { Trace } from './trace'
import { ErrorBox, Spinner } from './ui'
import './style.css'

function SignIn({ reason }: { reason?: string }) {
  const [key, setKey] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  async function submit(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      await signIn(key)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <main class="signin">
      <h1>agentorch studio</h1>
      {reason && <p class="notice" role="alert" data-testid="signin-reason">{reason}</p>}
      <form onSubmit={submit}>
        <label for="signin-key">API key</label>
        <input id="signin-key" data-testid="signin-key" type="password" autoComplete="off" spellcheck={false}
          placeholder="ak_…" value={key} onInput={(e) => setKey(e.currentTarget.value)} required />
        <button type="submit" data-testid="signin-submit" disabled={busy || !key.trim()}>Sign in</button>
        {busy && <Spinner label="Signing in" />}
        <ErrorBox error={error} />
      </form>
      <p class="hint" data-testid="signin-where">Running locally? <code>make dev</code> writes a development key to <code>.cache/dev-api-key</code> in the repository. On AWS, create a key with <code>scripts/apikey</code> (see docs/deploy.md).</p>
      <p class="hint">The key is exchanged for a short-lived token (kept for this tab only). Your key stays in this page's memory to renew it, and is never stored.</p>
    </main>
  )
}

// The traces list is loaded the first time it is opened.
let tracesModule: typeof import('./traces') | undefined
function Traces({ query }: { query: URLSearchParams }) {
  const [m, setM] = useState(tracesModule)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => { if (!m) import('./traces').then((x) => { tracesModule = x; setM(x) }, setError) }, [])
  return m ? <m.Traces query={query} /> : error ? <ErrorBox error={error} /> : <Spinner />
}

const NAV = [
  ['agents', 'Agents'],
  ['playground', 'Playground'],
  ['knowledge', 'Knowledge'],
  ['traces', 'Traces'],
  ['ops', 'Operations'],
  ['settings', 'Settings'],
] as const

function App() {
  const [authed, setAuthed] = useState(signedIn())
  const [reason, setReason] = useState<string | undefined>()
  const { parts, query } = useRoute()
  useEffect(() => onAuth((ok, why) => { setAuthed(ok); setReason(why) }), [])
  if (parts[0] === 'oauth' && relayToOpener(query)) return <main><h1 class="screen">Authorized</h1><p>This window closes.</p></main>
  if (!authed) return <SignIn reason={reason} />
  const screen = parts[0] ?? 'agents'
  // Each screen has one h1, its name; its sections are h2.
  const title = NAV.find(([k]) => k === screen)?.[1] ?? (screen === 'trace' ? 'Trace' : screen === 'oauth' ? 'Authorization' : 'Agents')
  let body
  switch (screen) {
    case 'playground': body = <Playground query={query} />; break
    case 'knowledge': body = <Knowledge sub={parts[1]} rest={parts.slice(2)} query={query} />; break
    case 'settings': body = <Settings />; break
    case 'ops': body = <Ops sub={parts[1]} rest={parts.slice(2)} query={query} />; break
    case 'oauth': body = <OAuthCallback query={query} />; break
    case 'trace': body = <Trace session={parts[1] ?? ''} execution={parts[2] ?? ''} />; break
    case 'traces': body = <Traces query={query} />; break
    default: body = <Agents id={parts[1]} />
  }
  return (
    <div class="shell" onClick={link}>
      <a class="skip" href="#main">Skip to content</a>
      <header class="top">
        <strong class="brand">agentorch studio</strong>
        <nav aria-label="Main">
          {NAV.map(([k, label]) => (
            <a key={k} href={ROOT + k} data-testid={'nav-' + k} aria-current={screen === k ? 'page' : undefined}>{label}</a>
          ))}
        </nav>
        <button type="button" data-testid="signout" onClick={() => signOut()}>Sign out</button>
      </header>
      <main id="main" tabIndex={-1}><h1 class="screen">{title}</h1>{body}</main>
    </div>
  )
}

// index.html holds a "Loading" line for the moment before this script runs; Preact 11 renders
// beside what a container holds rather than over it, so the line goes first.
const root = document.getElementById('app')!
root.replaceChildren()
render(<App />, root)

// The playground: open a session on an agent or an inline configuration, chat with streaming,
// watch tool calls and retrieval as they happen, answer approvals and function calls, cite,
// rate, and reopen earlier sessions.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, stream, type Agent, type Citation, type EventFields, type ExecuteResult, type MessageHistory, type RequiredAction, type Session, type SessionCreated, type SessionFromAgent, type StreamEvent } from './api'
import { markdown } from './md'
import { ROOT } from './router'
import { ErrorBox, messageOf, Section, Spinner, usePaged, when } from './ui'

interface Activity { id: string; label: string; detail?: string; ms?: number; error?: boolean; done: boolean }

interface Turn {
  role: 'user' | 'assistant'
  key: string
  id?: string // the stored message id (feedback)
  text: string
  citations?: Citation[]
  activity?: Activity[]
  execution?: string
  streaming?: boolean
  error?: string
  rating?: number
}

let seq = 0
const nextKey = () => 'k' + ++seq

export function Playground({ query }: { query: URLSearchParams }) {
  const [session, setSession] = useState<{ id: string; name: string } | null>(null)
  const [pending, setPending] = useState<RequiredAction | null>(null)
  const [turns, setTurns] = useState<Turn[]>([])
  const [reload, setReload] = useState(0)
  const sessions = usePaged<Session>('sessions/', 10, '', reload)

  async function open(id: string, name: string, waiting?: RequiredAction | null) {
    setSession({ id, name })
    setPending(waiting ?? null)
    setTurns([])
    try {
      const h = await api<MessageHistory>('GET', `runtime/${id}/messages/?limit=200`)
      setTurns(h.messages.map((m) => ({ role: m.role, key: nextKey(), id: m.id, text: m.content, citations: m.citations })))
    } catch (e) {
      setTurns([{ role: 'assistant', key: nextKey(), text: '', error: messageOf(e) }])
    }
  }

  return (
    <div class="cols">
      <div class="stack">
        <Opener initialAgent={query.get('agent') ?? ''} onOpened={(id, name) => { setSession({ id, name }); setTurns([]); setPending(null); setReload(reload + 1) }} />
        <Section title="Earlier sessions">
          <ErrorBox error={sessions.error} />
          <ul class="list">
            {sessions.items.map((s) => (
              <li key={s.id} aria-current={session?.id === s.id ? 'true' : undefined}>
                <button type="button" class="linklike" onClick={() => open(s.id, s.name, s.required_action)}>{s.name}</button>
                <small> {s.message_count} messages · {when(s.created_at)}{s.required_action ? ' · waiting' : ''}</small>
              </li>
            ))}
            {!sessions.loading && sessions.items.length === 0 && <li class="empty" data-testid="empty">No sessions yet. Pick an agent above and open a session to talk to it; no agent yet? <a href={ROOT + 'agents/new'}>Create one</a>.</li>}
          </ul>
          {sessions.pager}
        </Section>
      </div>
      {session
        ? <Chat key={session.id} session={session} turns={turns} setTurns={setTurns} pending={pending} setPending={setPending} onRan={() => setReload((n) => n + 1)} />
        : <Section title="Chat"><p>Pick an agent or paste a configuration, then open a session.</p></Section>}
    </div>
  )
}

function Opener({ initialAgent, onOpened }: { initialAgent: string; onOpened: (id: string, name: string) => void }) {
  const [mode, setMode] = useState<'agent' | 'inline'>('agent')
  const [agentKey, setAgentKey] = useState(initialAgent)
  const [inline, setInline] = useState(JSON.stringify({ name: 'Scratch', agent_type: 'react_agent', system_prompt: 'Be brief.', llm_config: { provider: 'local' }, tools: ['calculator'] }, null, 2))
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const agents = usePaged<Agent>('agent/', 100)

  async function submit(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      if (mode === 'agent') {
        const r = await api<SessionFromAgent>('GET', `sessions/from-agent/?agent_key=${encodeURIComponent(agentKey)}`)
        onOpened(r.session_id, r.agent_name)
      } else {
        const cfg = JSON.parse(inline)
        const r = await api<SessionCreated>('POST', 'sessions/', cfg)
        onOpened(r.session_id, String(cfg.name ?? 'inline'))
      }
    } catch (err) {
      setError(err instanceof SyntaxError ? new Error('The configuration is not valid JSON: ' + err.message) : err)
    } finally {
      setBusy(false)
    }
  }

  return (
    <Section title="New session">
      <form onSubmit={submit}>
        <fieldset class="row">
          <legend>Configuration</legend>
          <label class="check"><input type="radio" name="mode" data-testid="mode-agent" checked={mode === 'agent'} onChange={() => setMode('agent')} /> A stored agent</label>
          <label class="check"><input type="radio" name="mode" data-testid="mode-inline" checked={mode === 'inline'} onChange={() => setMode('inline')} /> Inline</label>
        </fieldset>
        {mode === 'agent'
          ? (
            <label>Agent
              <select data-testid="agent-pick" value={agentKey} onChange={(e) => setAgentKey(e.currentTarget.value)} required>
                <option value="">— choose —</option>
                {agentKey && !agents.items.some((a) => a.agent_key === agentKey) && <option value={agentKey}>{agentKey}</option>}
                {agents.items.map((a) => <option key={a.id} value={a.agent_key}>{a.name} ({a.agent_key})</option>)}
              </select>
            </label>
          )
          : (
            <label>Inline configuration (JSON)
              <textarea data-testid="inline-config" class="code" rows={8} spellcheck={false} value={inline} onInput={(e) => setInline(e.currentTarget.value)} />
            </label>
          )}
        <button type="submit" data-testid="session-open" disabled={busy || (mode === 'agent' && !agentKey)}>Open session</button>
        {busy && <Spinner label="Opening" />}
        <ErrorBox error={error} />
      </form>
    </Section>
  )
}

interface ChatProps {
  session: { id: string; name: string }
  turns: Turn[]
  setTurns: (f: (t: Turn[]) => Turn[]) => void
  pending: RequiredAction | null
  setPending: (p: RequiredAction | null) => void
  onRan: () => void // an execution ended: the earlier sessions' counts changed
}

function Chat({ session, turns, setTurns, pending, setPending, onRan }: ChatProps) {
  const [text, setText] = useState('')
  const [inputs, setInputs] = useState('')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const [cited, setCited] = useState<Citation | null>(null)
  const end = useRef<HTMLDivElement>(null)
  useEffect(() => end.current?.scrollIntoView({ block: 'end' }), [turns])

  function patch(key: string, f: (t: Turn) => Turn) {
    setTurns((ts) => ts.map((t) => (t.key === key ? f(t) : t)))
  }

  async function run(body: Record<string, unknown>, userText?: string) {
    setBusy(true)
    setError(null)
    const key = nextKey()
    setTurns((ts) => [
      ...ts,
      ...(userText !== undefined ? [{ role: 'user' as const, key: nextKey(), text: userText }] : []),
      { role: 'assistant', key, text: '', activity: [], streaming: true },
    ])
    const started = new Map<string, number>()
    try {
      await stream(session.id, body, (e: StreamEvent) => onEvent(key, e, started))
    } catch (e) {
      patch(key, (t) => ({ ...t, streaming: false, error: messageOf(e) }))
    } finally {
      patch(key, (t) => ({ ...t, streaming: false }))
      setBusy(false)
      onRan()
    }
  }

  function onEvent(key: string, e: StreamEvent, started: Map<string, number>) {
    switch (e.event) {
      case 'text':
        patch(key, (t) => ({ ...t, text: t.text + (e.data.delta ?? '') }))
        return
      case 'result':
      case 'requires_action': {
        const r = e.data
        if (!isResult(r)) return // the studio never asks for the message format
        const msgs = r.messages
        const last = msgs[msgs.length - 1]
        patch(key, (t) => ({
          ...t,
          id: last?.id,
          text: msgs.map((m) => m.content).filter(Boolean).join('\n\n') || t.text,
          citations: msgs.flatMap((m) => m.citations ?? []),
          execution: r.metadata.execution_id,
        }))
        setPending(e.event === 'requires_action' ? r.required_action ?? null : null)
        return
      }
      case 'failed':
        patch(key, (t) => ({ ...t, error: e.data.error?.message ?? 'The run failed' }))
        return
    }
    const d: EventFields = e.data.data ?? {}
    switch (e.event) {
      case 'tool_call': {
        const id = d.tool_use_id ?? nextKey()
        started.set(id, performance.now())
        const label = `${d.tool}${d.server ? ' @' + d.server : ''}`
        patch(key, (t) => ({ ...t, activity: [...(t.activity ?? []), { id, label, detail: JSON.stringify(d.input ?? {}), done: false }] }))
        return
      }
      case 'tool_result': {
        const id = d.tool_use_id ?? nextKey()
        patch(key, (t) => ({
          ...t,
          activity: upsert(t.activity ?? [], id, { label: String(d.tool), detail: String(d.output ?? ''), ms: d.duration_ms, error: d.is_error, done: true }),
        }))
        return
      }
      case 'retrieval':
        patch(key, (t) => ({ ...t, activity: [...(t.activity ?? []), { id: nextKey(), label: 'retrieval', detail: `“${d.query ?? ''}”: ${d.hits ?? 0} passages`, ms: d.duration_ms, done: true }] }))
        return
      case 'approval':
        patch(key, (t) => ({ ...t, activity: [...(t.activity ?? []), { id: nextKey(), label: `${d.tool} ${d.approve ? 'approved' : 'denied'}`, detail: d.reason, done: true }] }))
        return
      case 'error':
        patch(key, (t) => ({ ...t, activity: [...(t.activity ?? []), { id: nextKey(), label: 'error', detail: d.message, error: true, done: true }] }))
        return
    }
  }

  async function send(e: Event) {
    e.preventDefault()
    if (!text.trim() || busy) return
    const body: Record<string, unknown> = { content: text }
    if (inputs.trim()) {
      try {
        body.inputs = JSON.parse(inputs)
      } catch (err) {
        setError(new Error('Inputs are not valid JSON: ' + (err as Error).message))
        return
      }
    }
    const t = text
    setText('')
    await run(body, t)
  }

  return (
    <Section title={`Chat: ${session.name}`}>
      <div class="chat" aria-live="polite" aria-busy={busy}>
        {turns.map((t) => (
          <article key={t.key} class={'msg ' + t.role} data-testid={t.role === 'assistant' ? 'msg-assistant' : 'msg-user'} aria-label={t.role === 'user' ? 'You' : 'Assistant'}>
            {(t.activity ?? []).map((a) => (
              <div key={a.id} class={'tool' + (a.error ? ' bad' : '')} data-testid="tool-call">
                <span class="tool-name">{a.label}</span>
                {a.done ? (a.ms !== undefined ? <span class="ms">{a.ms} ms</span> : null) : <Spinner label="running" />}
                {a.detail && <code class="tool-detail">{a.detail.length > 300 ? a.detail.slice(0, 300) + '…' : a.detail}</code>}
              </div>
            ))}
            {t.role === 'assistant'
              ? <div class="md" dangerouslySetInnerHTML={{ __html: markdown(t.text) }} />
              : <p class="plain">{t.text}</p>}
            {t.streaming && <Spinner label="Thinking" />}
            {t.error && <p class="error" role="alert">{t.error}</p>}
            {t.citations && t.citations.length > 0 && (
              <p class="citations">Sources:{' '}
                {t.citations.map((c) => (
                  <a key={c.index} href={`#cite-${c.index}`} data-testid="citation" onClick={(e) => { e.preventDefault(); setCited(c) }}>[{c.index}]</a>
                ))}
              </p>
            )}
            {t.role === 'assistant' && t.id && !t.streaming && <Feedback turn={t} onRated={(r) => patch(t.key, (x) => ({ ...x, rating: r }))} />}
            {t.execution && <a class="small" data-testid="trace-link" href={`${ROOT}trace/${session.id}/${t.execution}`}>Trace</a>}
          </article>
        ))}
        <div ref={end} />
      </div>
      {cited && (
        <div class="passage" role="dialog" aria-label={`Source ${cited.index}`} data-testid="citation-passage">
          <header class="card-head"><strong>[{cited.index}] {cited.file_name}</strong> <small>chunk {cited.chunk_index} · score {cited.score.toFixed(3)}</small>
            <button type="button" onClick={() => setCited(null)} autoFocus>Close</button></header>
          <p class="plain">{cited.text}</p>
        </div>
      )}
      {pending && <Pending action={pending} busy={busy} onAnswer={(body) => run(body)} />}
      <form class="composer" onSubmit={send}>
        <label for="chat-input" class="sr-only">Message</label>
        <textarea id="chat-input" data-testid="chat-input" rows={2} value={text} placeholder="Write a message (Ctrl+Enter sends)"
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => { if (e.key === 'Enter' && (e.ctrlKey || e.metaKey)) send(e) }} />
        <button type="submit" data-testid="chat-send" disabled={busy || !text.trim() || pending !== null}>Send</button>
        <details>
          <summary>Inputs (variables)</summary>
          <label>inputs as JSON, e.g. {'{"customer": "Ada"}'}
            <textarea data-testid="chat-inputs" class="code" rows={2} value={inputs} onInput={(e) => setInputs(e.currentTarget.value)} />
          </label>
        </details>
        <ErrorBox error={error} />
      </form>
    </Section>
  )
}

/** Whether a result event's data is the session object (not the message format). */
function isResult(d: unknown): d is ExecuteResult {
  return typeof d === 'object' && d !== null && 'messages' in d && 'metadata' in d
}

function upsert(list: Activity[], id: string, a: Omit<Activity, 'id'>): Activity[] {
  return list.some((x) => x.id === id) ? list.map((x) => (x.id === id ? { ...x, ...a, detail: a.detail || x.detail } : x)) : [...list, { id, ...a }]
}

function Feedback({ turn, onRated }: { turn: Turn; onRated: (r: number) => void }) {
  const [error, setError] = useState<unknown>(null)
  async function rate(r: number) {
    try {
      await api('POST', 'sessions/feedback/', { message: turn.id, rating: r })
      onRated(r)
    } catch (e) {
      setError(e)
    }
  }
  return (
    <span class="feedback">
      <button type="button" class="thumb" data-testid="thumbs-up" aria-pressed={turn.rating === 1} aria-label="Good answer" onClick={() => rate(1)}><Thumb /></button>
      <button type="button" class="thumb" data-testid="thumbs-down" aria-pressed={turn.rating === -1} aria-label="Bad answer" onClick={() => rate(-1)}><Thumb down /></button>
      <ErrorBox error={error} />
    </span>
  )
}

/** A thumb drawn rather than an emoji, which needs a colour-emoji font the machine may not have. */
function Thumb({ down = false }: { down?: boolean }) {
  return (
    <svg viewBox="0 0 24 24" width="16" height="16" aria-hidden="true" focusable="false">
      <path fill="currentColor" transform={down ? 'rotate(180 12 12)' : undefined} d="M1 21h4V9H1v12zm22-11c0-1.1-.9-2-2-2h-6.31l.95-4.57.03-.32c0-.41-.17-.79-.44-1.06L14.17 1 7.59 7.59C7.22 7.95 7 8.45 7 9v10c0 1.1.9 2 2 2h9c.83 0 1.54-.5 1.84-1.22l3.02-7.05c.09-.23.14-.47.14-.73v-2z" />
    </svg>
  )
}

/** What a paused execution waits on: approvals (approve/deny) or function results (a JSON box each). */
function Pending({ action, busy, onAnswer }: { action: RequiredAction; busy: boolean; onAnswer: (body: Record<string, unknown>) => void }) {
  const [outputs, setOutputs] = useState<Record<string, string>>({})
  const [decisions, setDecisions] = useState<Record<string, boolean>>({})
  const [reasons, setReasons] = useState<Record<string, string>>({})
  const [error, setError] = useState('')
  const calls = action.tool_calls
  function decide(id: string, approve: boolean) {
    const next = { ...decisions, [id]: approve }
    setDecisions(next)
    if (calls.every((c) => c.id in next)) {
      onAnswer({
        approvals: calls.map((c) => ({
          tool_call_id: c.id, approve: next[c.id],
          ...(next[c.id] ? {} : { reason: (reasons[c.id] ?? '').trim() || 'denied in the studio' }),
        })),
      })
    }
  }
  function submitResults(e: Event) {
    e.preventDefault()
    try {
      const tool_results = calls.map((c) => {
        const raw = (outputs[c.id] ?? '').trim()
        let output: unknown = raw
        try { output = JSON.parse(raw) } catch { /* a plain string is an output too */ }
        return { tool_call_id: c.id, output }
      })
      setError('')
      onAnswer({ tool_results })
    } catch (err) {
      setError(String(err))
    }
  }
  return (
    <div class="pending" role="region" aria-label="The run waits for you">
      <strong>{action.type === 'approval' ? 'Approve these tool calls?' : 'Run these functions and send their results'}</strong>
      {action.type === 'approval'
        ? calls.map((c) => (
          <div key={c.id} class="tool" data-testid="pending-call">
            <span class="tool-name">{c.name}{c.server ? ' @' + c.server : ''}</span>
            <code class="tool-detail">{JSON.stringify(c.arguments)}</code>
            <button type="button" data-testid="approve" disabled={busy || c.id in decisions} onClick={() => decide(c.id, true)}>Approve</button>
            <label class="reason">Reason to deny (optional)
              <input data-testid="deny-reason" value={reasons[c.id] ?? ''} disabled={busy || c.id in decisions}
                onInput={(e) => setReasons({ ...reasons, [c.id]: e.currentTarget.value })} />
            </label>
            <button type="button" data-testid="deny" class="danger" disabled={busy || c.id in decisions} onClick={() => decide(c.id, false)}>Deny</button>
          </div>
        ))
        : (
          <form onSubmit={submitResults}>
            {calls.map((c) => (
              <label key={c.id} class="tool" data-testid="pending-call">
                <span class="tool-name">{c.name}</span> <code class="tool-detail">{JSON.stringify(c.arguments)}</code>
                <textarea data-testid="function-result" class="code" rows={2} placeholder='{"status": "shipped"}' value={outputs[c.id] ?? ''} onInput={(e) => setOutputs({ ...outputs, [c.id]: e.currentTarget.value })} />
              </label>
            ))}
            <button type="submit" data-testid="function-submit" disabled={busy}>Send results</button>
          </form>
        )}
      {error && <p class="error">{error}</p>}
    </div>
  )
}

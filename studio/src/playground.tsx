// The playground: open a session on an agent or an inline configuration, chat with streaming,
// watch tool calls and retrieval as they happen, answer approvals and function calls, cite,
// rate, and reopen earlier sessions.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, stream, type Agent, type Citation, type EventFields, type ExecuteResult, type MessageHistory, type RequiredAction, type Session, type StoredEvent, type SessionCreated, type SessionFromAgent, type StreamEvent } from './api'
import { markdown } from './md'
import { Memory } from './memory'
import { navigate, ROOT } from './router'
import type { components } from './schema'
import { ErrorBox, messageOf, Section, Spinner, usePaged, when } from './ui'

interface Activity { id: string; label: string; detail?: string; ms?: number; error?: boolean; done: boolean; waiting?: boolean }

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
  paused?: boolean // the run paused on this turn: it waits for (or got) an answer, it is not an answer
  stopped?: boolean // Stop cancelled the run
  usage?: Usage | null // the execution's tokens and cost when the session was reopened (null: none)
}

type HistoryMessage = MessageHistory['messages'][number]
type Usage = components['schemas']['Usage']
type Execution = Extract<components['schemas']['Execution'], { object: unknown }>

/** The open session: its id, its configuration's name and the title it was given (if any). */
interface Open { id: string; name: string; title?: string | null }

/** What the list and the chat call a session: its title, else its configuration's name. */
const label = (s: { name: string; title?: string | null }) => s.title || s.name

let seq = 0
const nextKey = () => 'k' + ++seq

/** The session's address: the playground with ?session=<id>, so that a reload or Back returns to it. */
export const sessionHref = (id: string) => `${ROOT}playground?session=${encodeURIComponent(id)}`

export function Playground({ query }: { query: URLSearchParams }) {
  const wanted = query.get('session') ?? ''
  const [session, setSession] = useState<Open | null>(null)
  const [pending, setPending] = useState<RequiredAction | null>(null)
  const [turns, setTurns] = useState<Turn[]>([])
  const [reload, setReload] = useState(0)
  const [confirm, setConfirm] = useState('')
  const [renaming, setRenaming] = useState('')
  const [refocus, setRefocus] = useState('') // the row whose Rename button takes the focus back
  const [error, setError] = useState<unknown>(null)
  const sessions = usePaged<Session>('sessions/', 10, '', reload)

  // The URL names the open session: open it (from the list, a reload, Back from a trace).
  useEffect(() => {
    if (!wanted) {
      setSession(null)
      return
    }
    if (session?.id === wanted) return
    let live = true
    setSession(null)
    setPending(null)
    setTurns([])
    ;(async () => {
      try {
        const s = await api<Session>('GET', `sessions/${encodeURIComponent(wanted)}/`)
        if (!live) return
        setSession({ id: s.id, name: s.name, title: s.title })
        setPending(s.required_action ?? null)
        const t = await history(s.id)
        if (live) setTurns(t)
      } catch (e) {
        if (live) setTurns([{ role: 'assistant', key: nextKey(), text: '', error: messageOf(e) }])
        if (live) setSession({ id: wanted, name: wanted })
      }
    })()
    return () => { live = false }
  }, [wanted])

  // An edit left with Escape or Cancel gives the focus back to its row's Rename button.
  useEffect(() => {
    if (!refocus) return
    document.querySelector<HTMLElement>(`[data-testid="session-row"][data-id="${CSS.escape(refocus)}"] [data-testid="session-rename"]`)?.focus()
    setRefocus('')
  }, [refocus])

  /** A session renamed from the list: the list is read again, the chat's header follows. */
  function renamed(s: Session) {
    setRenaming('')
    setSession((cur) => (cur?.id === s.id ? { ...cur, title: s.title } : cur))
    setReload((n) => n + 1)
  }

  async function remove(id: string) {
    setError(null)
    try {
      await api('DELETE', `sessions/${encodeURIComponent(id)}/`)
      setConfirm('')
      if (session?.id === id) navigate(ROOT + 'playground')
      setReload((n) => n + 1)
    } catch (e) {
      setError(e)
    }
  }

  return (
    <div class="cols">
      <div class="stack">
        <Opener initialAgent={query.get('agent') ?? ''} onOpened={(id, name) => { setSession({ id, name }); setTurns([]); setPending(null); setReload(reload + 1); navigate(sessionHref(id)) }} />
        <Section title="Earlier sessions">
          <ErrorBox error={sessions.error ?? error} />
          <ul class="list">
            {sessions.items.map((s) => (
              <li key={s.id} data-testid="session-row" data-id={s.id} aria-current={session?.id === s.id ? 'true' : undefined}>
                {renaming === s.id
                  ? <Rename session={s} onDone={renamed} onCancel={() => { setRenaming(''); setRefocus(s.id) }} />
                  : <a href={sessionHref(s.id)} data-testid="session-link">{label(s)}</a>}
                <small> {s.title ? <>{s.name} · </> : null}<code title={s.id}>{s.id.slice(0, 8)}</code> · {when(s.created_at)}{s.user_id ? ` · user ${s.user_id}` : ''} · {s.message_count} messages{s.required_action ? ' · waiting' : ''}</small>
                {renaming !== s.id && <>{' '}<button type="button" class="linklike" data-testid="session-rename" aria-label={`Rename session ${label(s)} ${s.id.slice(0, 8)}`} onClick={() => { setConfirm(''); setRenaming(s.id) }}>Rename</button>{' '}</>}
                {confirm === s.id
                  ? <span> Delete this session? <button type="button" class="danger" data-testid="session-delete-confirm" onClick={() => remove(s.id)}>Yes, delete session</button> <button type="button" onClick={() => setConfirm('')}>Cancel</button></span>
                  : <button type="button" class="linklike" data-testid="session-delete" aria-label={`Delete session ${label(s)} ${s.id.slice(0, 8)}`} onClick={() => setConfirm(s.id)}>Delete</button>}
              </li>
            ))}
            {!sessions.loading && sessions.items.length === 0 && <li class="empty" data-testid="empty">No sessions yet. Pick an agent above and open a session to talk to it; no agent yet? <a href={ROOT + 'agents/new'}>Create one</a>.</li>}
          </ul>
          {sessions.pager}
        </Section>
        {session && <Memory key={session.id} session={session.id} reload={reload} />}
      </div>
      {session
        ? <Chat key={session.id} session={session} turns={turns} setTurns={setTurns} pending={pending} setPending={setPending} onRan={() => setReload((n) => n + 1)} />
        : <Section title="Chat">{wanted ? <Spinner label="Opening the session" /> : <p>Pick an agent or paste a configuration, then open a session.</p>}</Section>}
    </div>
  )
}

/** What one runtime event adds to a turn's rows (tool calls and results, retrieval, approvals, errors). */
function applyEvent(list: Activity[], type: string, d: EventFields): Activity[] {
  switch (type) {
    case 'tool_call': {
      const id = d.tool_use_id ?? nextKey()
      const label = `${d.tool}${d.server ? ' @' + d.server : ''}`
      return [...list, { id, label, detail: JSON.stringify(d.input ?? {}), done: false }]
    }
    case 'tool_result':
      return upsert(list, d.tool_use_id ?? nextKey(), { label: String(d.tool), detail: String(d.output ?? ''), ms: d.duration_ms, error: d.is_error, done: true })
    case 'retrieval':
      return [...list, { id: nextKey(), label: 'retrieval', detail: `“${d.query ?? ''}”: ${d.hits ?? 0} passages`, ms: d.duration_ms, done: true }]
    case 'approval':
      return [...list, { id: nextKey(), label: `${d.tool} ${d.approve ? 'approved' : 'denied'}`, detail: d.reason, done: true }]
    case 'error':
      return [...list, { id: nextKey(), label: 'error', detail: d.message, error: true, done: true }]
  }
  return list
}

/** Rows still running when the run paused or ended: they wait for the user, or never finished. */
function settle(list: Activity[] | undefined, paused: boolean): Activity[] {
  return (list ?? []).map((a) => (a.done ? a : { ...a, done: true, waiting: paused }))
}

/** Every page of a wrapped list (a session's messages, events or executions); a page cut short by its size is followed from where it ended. */
async function all<T>(path: string, field: 'messages' | 'events' | 'executions'): Promise<T[]> {
  const out: T[] = []
  for (let offset = 0; ; offset = out.length) {
    const p = await api<Record<string, unknown>>('GET', `${path}${path.includes('?') ? '&' : '?'}limit=100&offset=${offset}`)
    const items = (p[field] ?? []) as T[]
    out.push(...items)
    if (!p.has_more || items.length === 0) return out
  }
}

/**
 * A stored session's turns as the chat showed them live: its messages, and for each assistant
 * message the rows, citations and trace link of the execution (part) that wrote it. Messages do
 * not name their execution: executions are taken in the order they started, each user message
 * opens the next one (skipping one that stored no message, e.g. it failed before), and an
 * execution that paused gives one part of its events (up to its requires_action) to each of its
 * assistant messages. The session's executions, read in one request with them, give each answered
 * turn its tokens and cost and whether Stop cancelled it, and a stopped run that wrote
 * no answer its turn as the chat showed it live (its rows, "Stopped.").
 */
async function history(sid: string): Promise<Turn[]> {
  const base = `runtime/${encodeURIComponent(sid)}`
  const [msgs, events, runs] = await Promise.all([all<HistoryMessage>(`${base}/messages/`, 'messages'), all<StoredEvent>(`${base}/events/`, 'events'),
    all<Execution>(`${base}/executions/`, 'executions')])
  const byRun = new Map(runs.map((x) => [x.id, x]))
  const usageOf = (id?: string) => (id ? (byRun.get(id) as { result?: ExecuteResult } | undefined)?.result?.metadata.usage ?? null : undefined)
  const stoppedOf = (id?: string) => (id ? String(byRun.get(id)?.status) === 'cancelled' : false)
  const byExec = new Map<string, StoredEvent[]>()
  for (const e of events) {
    const l = byExec.get(e.execution_id)
    if (l) l.push(e)
    else byExec.set(e.execution_id, [e])
  }
  const execs = [...byExec.entries()].map(([id, evs]) => {
    evs.sort((a, b) => a.sequence - b.sequence)
    const parts: StoredEvent[][] = [[]]
    for (const e of evs) {
      parts[parts.length - 1].push(e)
      if (e.type === 'requires_action') parts.push([])
    }
    return { id, start: Math.min(...evs.map((e) => Date.parse(e.timestamp))), parts }
  }).sort((a, b) => a.start - b.start)
  const turns: Turn[] = []
  let cur = -1, part = 0
  // The turn of the current execution when Stop cancelled it before it wrote an answer.
  const unanswered = () => {
    const ex = execs[cur]
    if (!ex || turns[turns.length - 1]?.role !== 'user' || !stoppedOf(ex.id)) return
    const activity = settle((ex.parts[0] ?? []).reduce((l, e) => applyEvent(l, e.type, e.data ?? {}), [] as Activity[]), false)
    turns.push({ role: 'assistant', key: nextKey(), text: '', activity, execution: ex.id, stopped: true, usage: usageOf(ex.id) })
  }
  for (const m of msgs) {
    if (m.role === 'user') {
      unanswered()
      let j = cur + 1
      // The message's time is to the second: an execution after the next one started before it.
      while (j + 1 < execs.length && execs[j + 1].start < Date.parse(m.timestamp)) j++
      cur = j
      part = 0
      turns.push({ role: 'user', key: nextKey(), id: m.id, text: m.content })
      continue
    }
    const prev = turns[turns.length - 1]
    if (prev?.role === 'assistant' && !prev.paused) {
      // One part of a run wrote several messages: live, they were one answer.
      prev.id = m.id
      prev.text = [prev.text, m.content].filter(Boolean).join('\n\n')
      prev.citations = [...(prev.citations ?? []), ...(m.citations ?? [])]
      continue
    }
    const ex = execs[cur]
    const evs = ex?.parts[part] ?? []
    part++
    const paused = evs.some((e) => e.type === 'requires_action') || (m.tool_calls?.length ?? 0) > 0
    // Only the last message can still wait; an earlier paused one was answered.
    const activity = settle(evs.reduce((l, e) => applyEvent(l, e.type, e.data ?? {}), [] as Activity[]), paused && m === msgs[msgs.length - 1])
    turns.push({ role: 'assistant', key: nextKey(), id: m.id, text: m.content, citations: m.citations, activity, execution: ex?.id, paused,
      stopped: !paused && stoppedOf(ex?.id), usage: usageOf(ex?.id) })
  }
  unanswered()
  return turns
}

function Opener({ initialAgent, onOpened }: { initialAgent: string; onOpened: (id: string, name: string) => void }) {
  const [mode, setMode] = useState<'agent' | 'inline'>('agent')
  const [agentKey, setAgentKey] = useState(initialAgent)
  const [userID, setUserID] = useState('')
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
        const r = await api<SessionFromAgent>('GET', `sessions/from-agent/?agent_key=${encodeURIComponent(agentKey)}${userID.trim() ? '&user_id=' + encodeURIComponent(userID.trim()) : ''}`)
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
        {mode === 'agent' && (
          <label>User (optional: the end user the session serves, whose memory the agent keeps)
            <input data-testid="session-user" value={userID} maxLength={256} onInput={(e) => setUserID(e.currentTarget.value)} />
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
  session: Open
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
  const [running, setRunning] = useState('') // the running execution's id, once the stream names it
  const [stopping, setStopping] = useState(false)
  const end = useRef<HTMLDivElement>(null)
  useEffect(() => end.current?.scrollIntoView({ block: 'end' }), [turns])

  function patch(key: string, f: (t: Turn) => Turn) {
    setTurns((ts) => ts.map((t) => (t.key === key ? f(t) : t)))
  }

  async function run(body: Record<string, unknown>, userText?: string) {
    setBusy(true)
    setError(null)
    setRunning('')
    setStopping(false)
    const key = nextKey()
    setTurns((ts) => [
      // An answer to a paused turn ends its wait: its rows no longer spin.
      ...ts.map((t) => (t.paused ? { ...t, activity: (t.activity ?? []).map((a) => ({ ...a, done: true, waiting: false })) } : t)),
      ...(userText !== undefined ? [{ role: 'user' as const, key: nextKey(), text: userText }] : []),
      { role: 'assistant', key, text: '', activity: [], streaming: true },
    ])
    try {
      await stream(session.id, body, (e: StreamEvent) => onEvent(key, e))
    } catch (e) {
      patch(key, (t) => ({ ...t, streaming: false, error: messageOf(e) }))
    } finally {
      patch(key, (t) => ({ ...t, streaming: false, activity: settle(t.activity, t.paused ?? false) }))
      setBusy(false)
      setRunning('')
      setStopping(false)
      onRan()
    }
  }

  async function stop() {
    if (!running) return
    setStopping(true)
    try {
      await api('POST', `runtime/${encodeURIComponent(session.id)}/executions/${encodeURIComponent(running)}/cancel/`)
    } catch (e) {
      setError(e)
      setStopping(false)
    }
  }

  function onEvent(key: string, e: StreamEvent) {
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
        const paused = e.event === 'requires_action'
        const stopped = String(r.status) === 'cancelled'
        patch(key, (t) => ({
          ...t,
          id: last?.id,
          text: msgs.map((m) => m.content).filter(Boolean).join('\n\n') || t.text,
          citations: msgs.flatMap((m) => m.citations ?? []),
          execution: r.metadata.execution_id,
          paused,
          stopped,
          activity: settle(t.activity, paused),
        }))
        setPending(paused ? r.required_action ?? null : null)
        return
      }
      case 'failed':
        patch(key, (t) => ({ ...t, error: e.data.error?.message ?? 'The run failed' }))
        return
    }
    const id = (e.data as { execution_id?: string }).execution_id
    if (id) {
      setRunning(id)
      patch(key, (t) => (t.execution ? t : { ...t, execution: id }))
    }
    const d: EventFields = e.data.data ?? {}
    patch(key, (t) => ({ ...t, activity: applyEvent(t.activity ?? [], e.event, d) }))
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
    <Section title={`Chat: ${label(session)}`}>
      <div class="chat" aria-live="polite" aria-busy={busy}>
        {turns.map((t) => (
          <article key={t.key} class={'msg ' + t.role} data-testid={t.role === 'assistant' ? 'msg-assistant' : 'msg-user'} aria-label={t.role === 'user' ? 'You' : 'Assistant'}>
            {(t.activity ?? []).map((a) => (
              <div key={a.id} class={'tool' + (a.error ? ' bad' : '')} data-testid="tool-call">
                <span class="tool-name">{a.label}</span>
                {a.done ? (a.waiting ? <small>waits for you</small> : a.ms !== undefined ? <span class="ms">{a.ms} ms</span> : null) : <Spinner label="running" />}
                {a.detail && <code class="tool-detail">{a.detail.length > 300 ? a.detail.slice(0, 300) + '…' : a.detail}</code>}
              </div>
            ))}
            {t.role === 'assistant'
              ? <div class="md" dangerouslySetInnerHTML={{ __html: markdown(t.text) }} />
              : <p class="plain">{t.text}</p>}
            {t.streaming && <Spinner label="Thinking" />}
            {t.stopped && <p class="small" data-testid="turn-stopped">Stopped.</p>}
            {t.error && <p class="error" role="alert">{t.error}</p>}
            {t.citations && t.citations.length > 0 && (
              <p class="citations">Sources:{' '}
                {t.citations.map((c) => (
                  <a key={c.index} href={`#cite-${c.index}`} data-testid="citation" onClick={(e) => { e.preventDefault(); setCited(c) }}>[{c.index}]</a>
                ))}
              </p>
            )}
            {t.role === 'assistant' && t.id && !t.streaming && !t.paused && t.text.trim() !== '' && <Feedback turn={t} onRated={(r) => patch(t.key, (x) => ({ ...x, rating: r }))} />}
            {t.role === 'assistant' && t.execution && !t.streaming && !t.paused && <TurnUsage key={t.execution} session={session.id} execution={t.execution} known={t.usage} />}
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
        {busy && <button type="button" class="danger" data-testid="chat-stop" disabled={!running || stopping} onClick={stop}>{stopping ? 'Stopping…' : 'Stop'}</button>}
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

/**
 * An answered turn's tokens and cost: its execution's, read from the execution's record, live as
 * when the session is reopened, so that both show the same figures (an execution that paused
 * shows them once, on the turn that ended it: its parts together). A record still being written
 * is read again shortly; one without a result (a failed run) shows nothing. A reopened session's
 * turns come with their figures (one request for all of them), and read none.
 */
function TurnUsage({ session, execution, known }: { session: string; execution: string; known?: Usage | null }) {
  const [usage, setUsage] = useState<Usage | null | undefined>(known)
  useEffect(() => {
    if (known !== undefined) return // read with the session's executions when it was reopened
    let live = true
    let tries = 0
    let timer: ReturnType<typeof setTimeout> | undefined
    const read = () => api<Execution>('GET', `runtime/${encodeURIComponent(session)}/executions/${encodeURIComponent(execution)}/`).then((x) => {
      if (!live) return
      const r = (x as { result?: ExecuteResult }).result
      if (r) setUsage(r.metadata.usage)
      else if ((x.status === 'running' || x.status === 'queued') && ++tries < 20) timer = setTimeout(read, 250)
      else setUsage(null)
    }, () => live && setUsage(null))
    read()
    return () => { live = false; clearTimeout(timer) }
  }, [session, execution])
  if (usage === undefined) return <Spinner label="Reading its tokens" />
  if (usage === null) return null
  return (
    <p class="small" data-testid="turn-usage">
      tokens in {usage.input_tokens}, out {usage.output_tokens} · cost {usage.cost_usd === null ? 'unknown (a model without a price)' : usd(usage.cost_usd)}
    </p>
  )
}

/** US dollars as a person reads them: $0, $0.000041 (two significant digits below a cent), $0.1234. */
function usd(n: number): string {
  return n === 0 ? '$0' : n < 0.01 ? `$${n.toPrecision(2)}` : `$${n.toFixed(4)}`
}

/**
 * A session's title edited in its row of the list: Enter (or Save) sends it, an empty title
 * takes it away (the row then shows the configuration's name), Escape or Cancel leaves it as it
 * was and gives the focus back to the row's Rename button.
 */
function Rename({ session, onDone, onCancel }: { session: Session; onDone: (s: Session) => void; onCancel: () => void }) {
  const [title, setTitle] = useState(session.title ?? '')
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const input = useRef<HTMLInputElement>(null)
  useEffect(() => { input.current?.focus(); input.current?.select() }, [])
  const id = `rename-${session.id}`
  async function save(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const t = title.trim()
      onDone(await api<Session>('PATCH', `sessions/${encodeURIComponent(session.id)}/`, { title: t === '' ? null : t }))
    } catch (err) {
      setError(err)
      setBusy(false)
    }
  }
  return (
    <form class="row" onSubmit={save} onKeyDown={(e) => { if (e.key === 'Escape') { e.preventDefault(); onCancel() } }}>
      <label for={id} class="sr-only">New title of the session {label(session)} {session.id.slice(0, 8)} (empty: none)</label>
      <input id={id} ref={input} data-testid="session-title-input" value={title} maxLength={200} placeholder={session.name}
        onInput={(e) => setTitle(e.currentTarget.value)} disabled={busy} />
      <button type="submit" data-testid="session-title-save" disabled={busy}>Save</button>
      <button type="button" data-testid="session-title-cancel" onClick={onCancel}>Cancel</button>
      <ErrorBox error={error} />
    </form>
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

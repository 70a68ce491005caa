// Traces: the caller's recent runs, newest first (GET /api/v1/executions/), filtered by agent,
// status and time range — the filters live in the address, so a reload or Back keeps them — a
// page at a time by the list's cursor. Each row opens the run's trace (trace.tsx).
import { useEffect, useState } from 'preact/hooks'
import { cursorPage, page, type Agent } from './api'
import { navigate, ROOT } from './router'
import type { components } from './schema'
import { ErrorBox, Section, Spinner } from './ui'

type Run = components['schemas']['ExecutionSummary']

const STATUSES = [['completed', 'Completed'], ['failed', 'Failed'], ['cancelled', 'Cancelled'], ['requires_action', 'Waiting for an answer']] as const
const RANGES = [['1h', 'Last hour', 3600e3], ['24h', 'Last 24 hours', 86400e3], ['7d', 'Last 7 days', 7 * 86400e3], ['30d', 'Last 30 days', 30 * 86400e3]] as const
const LIMIT = 25

/** The list's query for the filters of the address (since from the range, at the moment asked). */
function filters(q: URLSearchParams): string {
  const out = new URLSearchParams()
  const agent = q.get('agent'), status = q.get('status'), range = RANGES.find(([k]) => k === q.get('range'))
  if (agent) out.set('agent_id', agent)
  if (status) out.set('status', status)
  if (range) out.set('since', new Date(Date.now() - range[2]).toISOString())
  return out.toString()
}

export function Traces({ query }: { query: URLSearchParams }) {
  const agent = query.get('agent') ?? '', status = query.get('status') ?? '', range = query.get('range') ?? ''
  const key = `${agent}|${status}|${range}`
  const [agents, setAgents] = useState<Agent[] | null>(null)
  // The after of each page up to this one, for the filters they were read with.
  const [nav, setNav] = useState<{ key: string; cursors: string[] }>({ key, cursors: [''] })
  const cursors = nav.key === key ? nav.cursors : ['']
  const [runs, setRuns] = useState<Run[] | null>(null)
  const [next, setNext] = useState('')
  const [error, setError] = useState<unknown>(null)
  const [loading, setLoading] = useState(false)
  useEffect(() => { page<Agent>('agent/', 100, 0).then((p) => setAgents(p.items), () => setAgents([])) }, [])
  const after = cursors[cursors.length - 1]
  useEffect(() => {
    let live = true
    setLoading(true)
    setError(null)
    const q = filters(query)
    cursorPage<Run>(`executions/?limit=${LIMIT}${q ? '&' + q : ''}${after ? '&after=' + encodeURIComponent(after) : ''}`)
      .then((p) => { if (live) { setRuns(p.items); setNext(p.next) } }, (e) => live && setError(e))
      .finally(() => live && setLoading(false))
    return () => { live = false }
  }, [key, after])

  function set(name: string, value: string) {
    const q = new URLSearchParams(query)
    if (value) q.set(name, value)
    else q.delete(name)
    const s = q.toString()
    navigate(ROOT + 'traces' + (s ? '?' + s : ''))
  }
  const filtered = agent !== '' || status !== '' || range !== ''
  const known = agents?.some((a) => a.id === agent)
  return (
    <Section title="Recent runs">
      <div class="row" role="group" aria-label="Filters">
        <label>Agent
          <select data-testid="traces-agent" value={agent} onChange={(e) => set('agent', e.currentTarget.value)}>
            <option value="">All agents</option>
            {agents?.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
            {agent && agents && !known && <option value={agent}>Agent {agent.slice(0, 8)}</option>}
          </select>
        </label>
        <label>Status
          <select data-testid="traces-status" value={status} onChange={(e) => set('status', e.currentTarget.value)}>
            <option value="">Any status</option>
            {STATUSES.map(([k, l]) => <option key={k} value={k}>{l}</option>)}
          </select>
        </label>
        <label>Time
          <select data-testid="traces-range" value={range} onChange={(e) => set('range', e.currentTarget.value)}>
            <option value="">Any time</option>
            {RANGES.map(([k, l]) => <option key={k} value={k}>{l}</option>)}
          </select>
        </label>
      </div>
      <ErrorBox error={error} />
      <div class="hold-table">
        {runs === null ? (!error && <Spinner />) : (
          <table class="grid" data-testid="traces-table">
            <thead><tr><th>Started</th><th>Agent</th><th>Status</th><th class="num">Duration</th><th class="num">Tokens in → out</th><th class="num">Cost</th></tr></thead>
            <tbody>
              {runs.map((r) => (
                <tr key={r.id} data-testid="traces-row" data-status={r.status} data-execution={r.id}>
                  <td><a href={`${ROOT}trace/${encodeURIComponent(r.session_id)}/${encodeURIComponent(r.id)}`} data-testid="traces-open"
                    title={new Date(r.created_at * 1000).toLocaleString()}>{ago(r.created_at)}<span class="sr-only">: trace of {r.agent_name || 'the run'}</span></a></td>
                  <td class="wrap" data-testid="traces-agent-name">{r.agent_name || <span class="hint">inline configuration</span>}</td>
                  <td data-testid="traces-status-cell"><span class={r.status === 'failed' ? 'error' : r.status === 'completed' ? 'ok' : undefined}>{statusLabel(r.status)}</span>
                    {r.error && <><br /><small class="wrap">{r.error.message}</small></>}</td>
                  <td class="num" data-testid="traces-duration">{duration(r.execution_time)}</td>
                  <td class="num">{r.usage.input_tokens.toLocaleString()} → {r.usage.output_tokens.toLocaleString()}</td>
                  <td class="num" data-testid="traces-cost" title={r.usage.cost_usd === null ? 'A model of this run has no price' : undefined}>{cost(r.usage.cost_usd)}</td>
                </tr>
              ))}
              {runs.length === 0 && (
                <tr class="empty" data-testid="traces-empty"><td colSpan={6}>
                  {filtered
                    ? <>No runs match these filters{next ? ' on this page' : ''}. <button type="button" data-testid="traces-clear" onClick={() => navigate(ROOT + 'traces')}>Clear the filters</button></>
                    : <>No runs yet. Every run of an agent — in the playground or through the API — shows here once it ends, and opens to its trace: what the model was asked and answered, each tool's input and output, tokens, cost and time. <a class="button" href={ROOT + 'playground'}>Open the playground</a></>}
                </td></tr>
              )}
            </tbody>
          </table>
        )}
      </div>
      <div class="pager" role="group" aria-label="Pages">
        <button type="button" data-testid="traces-prev" disabled={cursors.length === 1 || loading} onClick={() => setNav({ key, cursors: cursors.slice(0, -1) })}>Newer</button>
        <button type="button" data-testid="traces-next" disabled={!next || loading} onClick={() => setNav({ key, cursors: [...cursors, next] })}>Older</button>
        {loading && runs !== null && <Spinner />}
      </div>
    </Section>
  )
}

function statusLabel(s: string): string {
  return STATUSES.find(([k]) => k === s)?.[1] ?? s
}

/** How long ago Unix second t was, in words ("just now", "5 min ago", "3 h ago", then the date). */
export function ago(t: number, now = Date.now()): string {
  const s = Math.max(0, Math.round(now / 1000 - t))
  if (s < 45) return 'just now'
  if (s < 3600) return `${Math.round(s / 60)} min ago`
  if (s < 86400) return `${Math.round(s / 3600)} h ago`
  return new Date(t * 1000).toLocaleDateString(undefined, { month: 'short', day: 'numeric', hour: '2-digit', minute: '2-digit' })
}

/** A duration in milliseconds for people: 340 ms, 1.2 s, 2 min 5 s. */
export function duration(ms: number): string {
  if (ms < 1000) return `${ms} ms`
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`
  const s = Math.round(ms / 1000)
  return `${Math.floor(s / 60)} min ${s % 60} s`
}

/** A run's cost: a dollar figure, or a dash when a model had no price. */
function cost(c: number | null): string {
  if (c === null) return '—'
  if (c === 0) return '$0'
  return c < 0.01 ? `$${c.toFixed(4)}` : `$${c.toFixed(2)}`
}

// Trace: one execution's recorded events as a waterfall of bars laid out by start time (a
// bar starts at its event's timestamp less its duration_ms) under a time axis: nodes, model
// calls, tools, retrieval, memory; errors and approvals as marks. Each row opens to what its
// event carries: a tool's input or output, a model call's answer (and prompt, when the
// deployment records it), a retrieval's query and passages, the memory records recalled, with
// tokens, duration and, for a model call, its cost (cost_usd, priced as the execution's; null
// for a model without a price). The execution's cost comes from its record.
import { useEffect, useState } from 'preact/hooks'
import { api, type EventFields, type EventList, type ExecuteResult, type StoredEvent } from './api'
import { ROOT } from './router'
import type { components } from './schema'
import { ErrorBox, Section, Spinner } from './ui'

type Execution = Extract<components['schemas']['Execution'], { object: unknown }>
type Usage = components['schemas']['Usage']

export function Trace({ session, execution }: { session: string; execution: string }) {
  const [events, setEvents] = useState<StoredEvent[] | null>(null)
  const [usage, setUsage] = useState<Usage | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [open, setOpen] = useState<Set<number>>(new Set())
  useEffect(() => {
    let live = true
    async function all() {
      const out: StoredEvent[] = []
      for (let offset = 0; ; offset += 100) {
        const p = await api<EventList>('GET', `runtime/${encodeURIComponent(session)}/events/?execution_id=${encodeURIComponent(execution)}&limit=100&offset=${offset}`)
        out.push(...p.events)
        if (!p.has_more || p.events.length === 0) return out
      }
    }
    all().then((e) => live && setEvents(e), (e) => live && setError(e))
    // The cost is the execution's (its record's usage); a trace shows without it when the
    // record cannot be read.
    api<Execution>('GET', `runtime/${encodeURIComponent(session)}/executions/${encodeURIComponent(execution)}/`).then(
      (x) => { const r = x.result as ExecuteResult | undefined; if (live && r) setUsage(r.metadata.usage) }, () => {})
    return () => { live = false }
  }, [session, execution])
  if (error) return <Section title="Trace"><ErrorBox error={error} /></Section>
  if (!events) return <Section title="Trace"><Spinner /></Section>
  // A bar ends at its event's timestamp and lasts its duration_ms; marks have no duration.
  const bars = events.map((e) => {
    const end = Date.parse(e.timestamp)
    const d: EventFields = e.data ?? {}
    const timed = typeof d.duration_ms === 'number'
    const ms = d.duration_ms ?? 0
    return { e, start: end - ms, end, ms, timed }
  })
  const t0 = Math.min(...bars.map((b) => b.start))
  const t1 = Math.max(...bars.map((b) => b.end), t0 + 1)
  const span = t1 - t0
  const tokens = events.filter((e) => e.type === 'model_call').reduce((s, e) => {
    const d: EventFields = e.data ?? {}
    return [s[0] + (d.input_tokens ?? 0), s[1] + (d.output_tokens ?? 0)]
  }, [0, 0])
  const toggle = (seq: number) => setOpen((o) => { const n = new Set(o); if (n.has(seq)) n.delete(seq); else n.add(seq); return n })
  return (
    <Section title="Trace" actions={<a href={`${ROOT}playground?session=${encodeURIComponent(session)}`} data-testid="trace-back">Back to the chat</a>}>
      <p data-testid="trace-summary">Execution <code>{execution}</code> · {events.length} events · {span} ms · tokens in {tokens[0]}, out {tokens[1]}
        {usage && <span data-testid="trace-cost" data-usd={usage.cost_usd ?? undefined}> · cost {usage.cost_usd === null ? 'unknown (a model without a price)' : usd(usage.cost_usd)}</span>}</p>
      <div class="ev" data-testid="trace-axis" aria-hidden="true" style={{ borderBottom: 0 }}>
        <span />
        <span class="ev-track" style={{ background: 'none', height: '1.2rem' }}>
          {[0, 0.25, 0.5, 0.75, 1].map((f) => (
            <small key={f} data-testid="trace-tick" style={{ position: 'absolute', left: `${f * 100}%`, transform: `translateX(-${f * 100}%)`, whiteSpace: 'nowrap' }}>{Math.round(f * span)} ms</small>
          ))}
        </span>
        <span />
      </div>
      <ol class="timeline" aria-label="Events in time order">
        {bars.map(({ e, start, ms, timed }) => {
          const id = `ev-${e.sequence}`
          const isOpen = open.has(e.sequence)
          return (
            <li key={e.sequence} class={'ev ' + e.type} data-testid="trace-event" data-type={e.type} data-ms={ms} data-start={start - t0}
              data-cost={costOf(e)}>
              <span class="ev-label">
                <button type="button" class="linklike" data-testid="trace-open" aria-expanded={isOpen} aria-controls={id} onClick={() => toggle(e.sequence)}>
                  {e.type}{e.node ? ` · ${e.node}` : ''}{label(e)}
                </button>
              </span>
              <span class="ev-track" aria-hidden="true">
                <span class={timed ? 'ev-bar' : 'ev-bar ev-mark'} data-testid={timed ? 'trace-bar' : 'trace-mark'} style={{ marginLeft: `${((start - t0) / span) * 100}%`, width: `${Math.max(0.5, (ms / span) * 100)}%` }} />
              </span>
              <span class="ev-ms" data-testid="trace-ms">{timed ? `${ms} ms` : ''}</span>
              {isOpen && <div id={id} data-testid="trace-detail" style={{ gridColumn: '1 / -1', padding: '.3rem 0 .5rem', minWidth: 0 }}><Detail e={e} start={start - t0} ms={ms} timed={timed} /></div>}
            </li>
          )
        })}
      </ol>
    </Section>
  )
}

function label(e: StoredEvent): string {
  const d: EventFields = e.data ?? {}
  switch (e.type) {
    case 'model_call': return ` · ${d.provider || 'default'} ${d.model || ''} · ${d.input_tokens}→${d.output_tokens} tokens${d.cost_usd !== undefined ? ` · ${callCost(d.cost_usd)}` : ''}`
    case 'tool_call': case 'tool_result': return ` · ${d.tool}${d.is_error ? ' (error)' : ''}`
    case 'retrieval': return ` · ${d.hits} hits`
    case 'error': return ` · ${d.message}`
    case 'approval': return ` · ${d.tool} ${d.approve ? 'approved' : 'denied'}`
    case 'node_finished': return ` · ${d.stop_reason}`
  }
  return ''
}

/** A cost in US dollars: four decimals, or two significant digits for a fraction of a hundredth of a cent. */
function usd(v: number): string {
  return '$' + (v === 0 || v >= 0.0001 ? v.toFixed(4) : v.toPrecision(2))
}

/** A model call's priced cost, for its row's data-cost (undefined: unpriced, or not a model call). */
function costOf(e: StoredEvent): number | undefined {
  const d: EventFields = e.data ?? {}
  return e.type === 'model_call' && typeof d.cost_usd === 'number' ? d.cost_usd : undefined
}

/** A model call's cost_usd (absent on events recorded before calls carried it). */
function callCost(v: number | null): string {
  return v === null ? 'cost unknown (a model without a price)' : usd(v)
}

const pre = { whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', margin: '.2rem 0', padding: '.4rem', background: 'var(--code-bg)', borderRadius: '4px' }

/** What one event carries, as labelled blocks. */
function Detail({ e, start, ms, timed }: { e: StoredEvent; start: number; ms: number; timed: boolean }) {
  if (e.truncated) return <p class="hint">This event's data was dropped when it was stored (the execution's events were too large).</p>
  const d: EventFields = e.data ?? {}
  const facts: [string, string][] = [['started', `+${start} ms`]]
  if (timed) facts.push(['duration', `${ms} ms`])
  if (typeof d.input_tokens === 'number') facts.push(['tokens', `in ${d.input_tokens}, out ${d.output_tokens}`])
  if (e.type === 'model_call' && d.cost_usd !== undefined) facts.push(['cost', d.cost_usd === null ? 'unknown (a model without a price)' : usd(d.cost_usd)])
  if (typeof d.embedding_tokens === 'number') facts.push(['embedding tokens', String(d.embedding_tokens)])
  if (d.stop_reason) facts.push(['stop reason', String(d.stop_reason)])
  if (d.server) facts.push(['server', d.server])
  if (d.tool_use_id) facts.push(['tool call', d.tool_use_id])
  const blocks: [string, string, string][] = [] // title, test id, text
  if (e.type === 'tool_call') blocks.push(['Input', 'trace-input', JSON.stringify(d.input ?? null, null, 2)])
  if (e.type === 'tool_result') blocks.push([d.is_error ? 'Output (error)' : 'Output', 'trace-output', d.output ?? ''])
  if (e.type === 'model_call') {
    if (d.prompt) {
      blocks.push(['System prompt', 'trace-prompt', d.prompt.system])
      d.prompt.messages.forEach((m) => blocks.push([m.role, 'trace-prompt', m.text]))
    }
    if (d.output !== undefined) blocks.push(['Output', 'trace-output', d.output || '(no text: the model asked for tools)'])
  }
  if ((e.type === 'retrieval' || e.type === 'memory_recall') && d.query !== undefined) blocks.push(['Query', 'trace-input', d.query])
  if (e.type === 'retrieval' && d.chunks) {
    blocks.push(['Passages', 'trace-output', d.chunks.map((c) => `[${c.index}] file ${c.file_id} chunk ${c.chunk_index} · score ${c.score.toFixed(3)} · knowledge base ${c.knowledge_base_id}`).join('\n') || '(none)'])
  }
  if (e.type === 'memory_recall') {
    if (d.blocks && d.blocks.length) facts.push(['blocks', d.blocks.join(', ')])
    blocks.push(['Records', 'trace-output', (d.records ?? []).map((r) => `${r.score.toFixed(3)} · ${r.text}`).join('\n') || '(none)'])
  }
  if (e.type === 'error' && d.message) blocks.push(['Message', 'trace-output', d.message])
  return (
    <div>
      <dl data-testid="trace-facts" style={{ display: 'flex', flexWrap: 'wrap', gap: '.2rem 1rem', margin: 0 }}>
        {facts.map(([k, v]) => <div key={k}><dt style={{ display: 'inline' }}>{k}: </dt><dd style={{ display: 'inline', margin: 0 }}>{v}</dd></div>)}
      </dl>
      {blocks.map(([title, tid, text], i) => (
        <div key={i}>
          <strong>{title}</strong>
          <pre class="code" data-testid={tid} style={pre}>{text}</pre>
        </div>
      ))}
    </div>
  )
}

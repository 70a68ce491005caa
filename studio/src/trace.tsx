// Trace: one execution's recorded events as a timeline of bars (nodes, model calls, tools,
// retrieval) with their durations and token usage; errors and approvals as marks.
import { useEffect, useState } from 'preact/hooks'
import { api, type EventFields, type EventList, type StoredEvent } from './api'
import { ROOT } from './router'
import { ErrorBox, Section, Spinner } from './ui'

export function Trace({ session, execution }: { session: string; execution: string }) {
  const [events, setEvents] = useState<StoredEvent[] | null>(null)
  const [error, setError] = useState<unknown>(null)
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
  return (
    <Section title="Trace" actions={<a href={`${ROOT}playground?session=${encodeURIComponent(session)}`} data-testid="trace-back">Back to the chat</a>}>
      <p data-testid="trace-summary">Execution <code>{execution}</code> · {events.length} events · {span} ms · tokens in {tokens[0]}, out {tokens[1]}</p>
      <ol class="timeline" aria-label="Events in time order">
        {bars.map(({ e, start, ms, timed }) => (
          <li key={e.sequence} class={'ev ' + e.type} data-testid="trace-event" data-type={e.type} data-ms={ms}>
            <span class="ev-label">{e.type}{e.node ? ` · ${e.node}` : ''}{label(e)}</span>
            <span class="ev-track" aria-hidden="true">
              <span class={timed ? 'ev-bar' : 'ev-bar ev-mark'} data-testid={timed ? 'trace-bar' : 'trace-mark'} style={{ marginLeft: `${((start - t0) / span) * 100}%`, width: `${Math.max(0.5, (ms / span) * 100)}%` }} />
            </span>
            <span class="ev-ms" data-testid="trace-ms">{timed ? `${ms} ms` : ''}</span>
          </li>
        ))}
      </ol>
    </Section>
  )
}

function label(e: StoredEvent): string {
  const d: EventFields = e.data ?? {}
  switch (e.type) {
    case 'model_call': return ` · ${d.provider || 'default'} ${d.model || ''} · ${d.input_tokens}→${d.output_tokens} tokens`
    case 'tool_call': case 'tool_result': return ` · ${d.tool}${d.is_error ? ' (error)' : ''}`
    case 'retrieval': return ` · ${d.hits} hits`
    case 'error': return ` · ${d.message}`
    case 'approval': return ` · ${d.tool} ${d.approve ? 'approved' : 'denied'}`
    case 'node_finished': return ` · ${d.stop_reason}`
  }
  return ''
}

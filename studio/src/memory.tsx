// The memory panel beside the playground's chat: what the open session's agent remembers of the
// session's user (docs/memory.md) — its blocks, whose value can be corrected, and its records,
// which can be corrected or deleted. Read again after every turn (the turn may have written it).
// A session without a user has no memory: no panel.
import { useEffect, useState } from 'preact/hooks'
import { api, type Session } from './api'
import type { components } from './schema'
import { Confirm, ErrorBox, Section, Spinner, usePaged, when } from './ui'

type MemoryBlock = components['schemas']['MemoryBlock']
type MemoryRecord = components['schemas']['MemoryRecord']
type BlockUpdate = components['schemas']['MemoryBlockUpdate']
type RecordUpdate = components['schemas']['MemoryRecordUpdate']

/** The memory of the session's user: of the session's agent when it was opened from one, all of the user's otherwise. */
export function Memory({ session, reload }: { session: string; reload: unknown }) {
  const [scope, setScope] = useState<{ user: string; agent: string | null } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [bump, setBump] = useState(0)

  useEffect(() => {
    let live = true
    setScope(null)
    api<Session>('GET', `sessions/${encodeURIComponent(session)}/`)
      .then((s) => live && setScope(s.user_id ? { user: s.user_id, agent: s.agent_id } : null))
      .catch((e) => live && setError(e))
    return () => { live = false }
  }, [session])

  const q = scope ? `?user_id=${encodeURIComponent(scope.user)}${scope.agent ? `&agent_id=${encodeURIComponent(scope.agent)}` : ''}` : ''
  const blocks = usePaged<MemoryBlock>(scope ? 'memory/blocks/' + q : null, 100, '', `${String(reload)}/${bump}`)
  const records = usePaged<MemoryRecord>(scope ? 'memory/records/' + q : null, 100, '', `${String(reload)}/${bump}`)

  async function change(path: string, method: 'PATCH' | 'DELETE', body?: BlockUpdate | RecordUpdate) {
    setError(null)
    try {
      await api(method, path, body)
      setBump((n) => n + 1)
      return true
    } catch (e) {
      setError(e)
      return false
    }
  }

  if (!scope) return error ? <ErrorBox error={error} /> : null
  return (
    <div data-testid="memory-panel">
      <Section title="Memory">
        <p class="small">What {scope.agent ? 'this agent' : 'the agents'} remember{scope.agent ? 's' : ''} of the user <code data-testid="memory-user-id">{scope.user}</code>.</p>
        <ErrorBox error={error ?? blocks.error ?? records.error} />
        <h3>Blocks</h3>
        <ul class="list">
          {blocks.items.map((b) => (
            <li key={b.id} data-testid="memory-block" data-id={b.id}>
              <strong>{b.label}</strong> <small>{b.value.length}/{b.limit} characters · {when(b.updated_at)}</small>
              <Editable what={`block ${b.label}`} testid="memory-block" value={b.value} max={b.limit}
                onSave={(v) => change(`memory/blocks/${encodeURIComponent(b.id)}/`, 'PATCH', { value: v })} />
            </li>
          ))}
          {!blocks.loading && blocks.items.length === 0 && <li class="empty">No blocks written yet.</li>}
        </ul>
        <h3>Records</h3>
        <ul class="list">
          {records.items.map((r) => (
            <li key={r.id} data-testid="memory-record" data-id={r.id}>
              <Editable what="record" testid="memory-record" value={r.text} max={2000}
                onSave={(v) => change(`memory/records/${encodeURIComponent(r.id)}/`, 'PATCH', { text: v })} />
              <small>{r.source.type} · {when(r.updated_at)}</small>{' '}
              <Confirm label="Delete" question="Delete this record? The agent forgets it." testid="memory-record-delete" name={`Delete record ${r.text.slice(0, 40)}`}
                onConfirm={() => change(`memory/records/${encodeURIComponent(r.id)}/`, 'DELETE')} />
            </li>
          ))}
          {!records.loading && records.items.length === 0 && <li class="empty">No records yet: the agent saves them with memory_save, or extraction after a turn.</li>}
        </ul>
        {(blocks.loading || records.loading) && <Spinner label="Reading memory" />}
      </Section>
    </div>
  )
}

/** A text shown as it is, with an Edit button that turns it into a textarea with Save and Cancel. */
function Editable({ what, testid, value, max, onSave }: { what: string; testid: string; value: string; max: number; onSave: (v: string) => Promise<boolean> }) {
  const [draft, setDraft] = useState<string | null>(null)
  const [busy, setBusy] = useState(false)
  if (draft === null) {
    return (
      <div>
        <p class="plain" data-testid={testid + '-text'}>{value || <em>empty</em>}</p>
        <button type="button" class="linklike" data-testid={testid + '-edit'} aria-label={`Edit ${what}`} onClick={() => setDraft(value)}>Edit</button>
      </div>
    )
  }
  async function save(e: Event) {
    e.preventDefault()
    setBusy(true)
    const ok = await onSave(draft ?? '')
    setBusy(false)
    if (ok) setDraft(null)
  }
  return (
    <form onSubmit={save}>
      <label>New text of the {what}
        <textarea data-testid={testid + '-input'} rows={3} maxLength={max} value={draft} onInput={(e) => setDraft(e.currentTarget.value)} />
      </label>
      <button type="submit" data-testid={testid + '-save'} disabled={busy}>Save</button>{' '}
      <button type="button" onClick={() => setDraft(null)}>Cancel</button>
    </form>
  )
}

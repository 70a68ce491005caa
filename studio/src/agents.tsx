// Agents: the paged list, an editor for the whole configuration checked live by
// /agent/validate/, delete, visibility flags, and the versions with a side-by-side diff.
import { useEffect, useMemo, useRef, useState } from 'preact/hooks'
import { api, ApiError, type Agent, type AgentVersion, type FieldError, type ValidateResult } from './api'
import { diffLines, inOrder, rememberOrder } from './diff'
import { CodeEditor } from './editor'
import { Graph } from './graph'
import { AgentForm, readCatalog } from './agentform'
import { navigate, ROOT } from './router'
import { Confirm, ErrorBox, messageOf, Section, Spinner, usePaged, when } from './ui'

/** The yaml library, loaded the first time the editor switches to YAML (it stays out of the first screen's script). */
type YAMLLib = typeof import('yaml')
let yamlLib: YAMLLib | null = null

type Format = 'json' | 'yaml'

/** The configuration written in a format. */
function write(v: unknown, f: Format): string {
  return f === 'yaml' && yamlLib ? yamlLib.stringify(v) : JSON.stringify(v, null, 2)
}

/** Reads a configuration written in a format: its object, or why it is not one. */
function read(text: string, f: Format): { value?: Record<string, unknown>; error?: string } {
  const name = f === 'yaml' ? 'YAML' : 'JSON'
  let v: unknown
  try {
    v = f === 'yaml' && yamlLib ? yamlLib.parse(text) : JSON.parse(text)
  } catch (e) {
    return { error: `Not valid ${name}: ` + (e as Error).message }
  }
  return typeof v === 'object' && v && !Array.isArray(v) ? { value: v as Record<string, unknown> } : { error: `The configuration must be a ${name} object (a mapping)` }
}

const TEMPLATE = {
  name: 'Helper',
  agent_type: 'react_agent',
  system_prompt: 'You are a helpful assistant.',
  llm_config: { provider: 'local' },
  tools: ['calculator'],
}

export function Agents({ id }: { id?: string }) {
  const [reload, setReload] = useState(0)
  const list = usePaged<Agent>('agent/', 20, '', reload)
  return (
    <div class="cols">
      <Section title="Agents" actions={<a class="button" href={ROOT + 'agents/new'} data-testid="agent-new">New agent</a>}>
        <ErrorBox error={list.error} />
        <ul class="list">
          {list.items.map((a) => (
            <li key={a.id} data-testid="agent-row" aria-current={a.id === id ? 'true' : undefined}>
              <a href={ROOT + 'agents/' + a.id}>{a.name}</a>
              <small> {a.agent_key} · v{a.version_number}{a.is_shared ? ' · shared' : ''}{a.is_public ? ' · public' : ''}</small>
            </li>
          ))}
          {!list.loading && list.items.length === 0 && <li class="empty" data-testid="empty">No agents yet. An agent is a model with a prompt, tools and knowledge: create one, then talk to it in the playground. <a class="button" href={ROOT + 'agents/new'}>Create an agent</a></li>}
        </ul>
        {list.pager}
      </Section>
      {id === 'new' && <Editor key="new" onSaved={(a) => { setReload(reload + 1); navigate(ROOT + 'agents/' + a.id) }} />}
      {id && id !== 'new' && <AgentDetail key={id} id={id} onChanged={() => setReload(reload + 1)} />}
    </div>
  )
}

function AgentDetail({ id, onChanged }: { id: string; onChanged: () => void }) {
  const [agent, setAgent] = useState<Agent | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [n, setN] = useState(0)
  useEffect(() => {
    setError(null)
    // The editor edits what was saved (the current version's snapshot), not the agent's record,
    // which the service fills with defaults: saved unchanged, it would differ from its version.
    // The form shows once the deployment's catalog is read too, so it does not grow as it arrives.
    Promise.all([api<Agent>('GET', `agent/${encodeURIComponent(id)}/`), api<AgentVersion>('GET', `agent/${encodeURIComponent(id)}/versions/current/`), readCatalog().catch(() => null)])
      .then(([a, v]) => setAgent({ ...a, system_config: inOrder(a.id, v.system_config) }), setError)
  }, [id, n])
  async function remove() {
    if (!agent) return
    try {
      await api('DELETE', `agent/${encodeURIComponent(id)}/`)
      onChanged()
      navigate(ROOT + 'agents')
    } catch (e) {
      setError(e)
    }
  }
  if (error) return <Section title="Agent"><ErrorBox error={error} /></Section>
  if (!agent) return <Section title="Agent"><Spinner /></Section>
  return (
    <div class="stack">
      <Editor agent={agent} onSaved={(a) => { setAgent(a); setN(n + 1); onChanged() }} />
      <Section title="Actions">
        <p>
          <a class="button" href={ROOT + 'playground?agent=' + encodeURIComponent(agent.agent_key)}>Try in the playground</a>{' '}
          <Confirm label="Delete agent" question={`Delete “${agent.name}” and all its versions?`} testid="agent-delete" onConfirm={remove} />
        </p>
        <p><small>Key <code>{agent.agent_key}</code> · owner {agent.owner} · updated {when(agent.updated_at)} · hash <code>{agent.config_hash}</code></small></p>
      </Section>
      <Versions id={id} current={agent.version_number} />
    </div>
  )
}

/** The editor of a new agent or of an existing one (PUT replaces its configuration). */
function Editor({ agent, onSaved }: { agent?: Agent; onSaved: (a: Agent) => void }) {
  const [format, setFormat] = useState<Format>('json')
  const [text, setText] = useState(write(agent?.system_config ?? TEMPLATE, 'json'))
  const [switching, setSwitching] = useState<unknown>(null)
  const [shared, setShared] = useState(agent?.is_shared ?? false)
  const [pub, setPublic] = useState(agent?.is_public ?? false)
  // of: the parse the check answers, so that an answer about an earlier text is never shown as this one's.
  const [check, setCheck] = useState<{ busy: boolean; errors: FieldError[]; parse?: string; valid?: boolean; of?: unknown }>({ busy: false, errors: [] })
  const [saving, setSaving] = useState(false)
  const [error, setError] = useState<unknown>(null)
  const timer = useRef<number | undefined>(undefined)

  const parsed = useMemo(() => read(text, format), [text, format])

  // Switching converts the text; a text that does not parse stays as it is, with the reason.
  async function switchTo(f: Format) {
    if (f === format) return
    setSwitching(null)
    if (!parsed.value) { setSwitching(new Error(`Fix the ${format.toUpperCase()} before switching: ${parsed.error}`)); return }
    try {
      if (f === 'yaml' && !yamlLib) yamlLib = await import('yaml')
    } catch (e) {
      setSwitching(new Error('The YAML editor could not be loaded: ' + messageOf(e)))
      return
    }
    setText(write(parsed.value, f))
    setFormat(f)
  }

  // Checked live: 400 ms after the last keystroke, through the API's own validation.
  useEffect(() => {
    clearTimeout(timer.current)
    if (parsed.error) { setCheck({ busy: false, errors: [], parse: parsed.error }); return }
    let live = true
    setCheck((c) => ({ ...c, busy: true }))
    timer.current = window.setTimeout(() => {
      api<ValidateResult>('POST', 'agent/validate/', { system_config: parsed.value })
        .then((r) => live && setCheck({ busy: false, errors: r.valid ? [] : r.errors, valid: r.valid, of: parsed }))
        .catch((e) => live && setCheck({ busy: false, errors: e instanceof ApiError ? e.errors : [], parse: e instanceof ApiError && e.errors.length ? undefined : String(e.message) }))
    }, 400)
    return () => { live = false; clearTimeout(timer.current) }
  }, [parsed])


  async function save(e: Event) {
    e.preventDefault()
    if (!parsed.value) return
    setSaving(true)
    setError(null)
    try {
      const body = { system_config: parsed.value, is_shared: shared, is_public: pub }
      const a = agent
        ? await api<Agent>('PUT', `agent/${encodeURIComponent(agent.id)}/`, body)
        : await api<Agent>('POST', 'agent/', body)
      rememberOrder(a.id, parsed.value)
      onSaved(a)
    } catch (err) {
      setError(err)
      if (err instanceof ApiError && err.errors.length) setCheck({ busy: false, errors: err.errors })
    } finally {
      setSaving(false)
    }
  }

  return (
    <Section title={agent ? `Edit ${agent.name} (v${agent.version_number})` : 'New agent'}>
      <form onSubmit={save} class="editor">
        <AgentForm value={parsed.value} parseError={parsed.error} errors={check.errors} onChange={(next) => { setSwitching(null); setText(write(next, format)) }} />
        <div class="row">
          <label class="check"><input type="checkbox" checked={shared} onChange={(e) => setShared(e.currentTarget.checked)} /> Shared in my company</label>
          <label class="check"><input type="checkbox" checked={pub} onChange={(e) => setPublic(e.currentTarget.checked)} /> Public</label>
        </div>
        <fieldset class="row format">
          <legend>Edit the whole configuration as</legend>
          <label class="check"><input type="radio" name="agent-format" data-testid="format-json" checked={format === 'json'} onChange={() => switchTo('json')} /> JSON</label>
          <label class="check"><input type="radio" name="agent-format" data-testid="format-yaml" checked={format === 'yaml'} onChange={() => switchTo('yaml')} /> YAML</label>
        </fieldset>
        <ErrorBox error={switching} />
        <CodeEditor id="agent-config" testid="agent-config" label={`Whole configuration (${format === 'yaml' ? 'YAML' : 'JSON'})`}
          format={format} value={text} onChange={(t) => { setSwitching(null); setText(t) }} fields={check.errors} describedBy="agent-check" />
        <div id="agent-check" aria-live="polite">
          {check.busy && <Spinner label="Checking" />}
          {check.parse && <p class="error">{check.parse}</p>}
          {!check.busy && check.of === parsed && check.valid && check.errors.length === 0 && <p class="ok">The configuration is valid.</p>}
          {check.errors.length > 0 && (
            <ul class="field-errors">
              {check.errors.map((f, i) => (
                <li key={f.field + i} data-testid="field-error" data-field={f.field}><code>{f.field}</code>: {f.message}</li>
              ))}
            </ul>
          )}
        </div>
        {parsed.value && <Graph config={parsed.value} />}
        <button type="submit" data-testid="agent-save" disabled={saving || !parsed.value}>{agent ? 'Save new version' : 'Create agent'}</button>
        {saving && <Spinner label="Saving" />}
        <ErrorBox error={error} />
      </form>
    </Section>
  )
}

function Versions({ id, current }: { id: string; current: string }) {
  const list = usePaged<AgentVersion>(`agent/${encodeURIComponent(id)}/versions/`, 20, '', current)
  const [left, setLeft] = useState('')
  const [right, setRight] = useState('')
  const byNumber = (v: string) => list.items.find((x) => x.version_number === v)
  const a = byNumber(left), b = byNumber(right)
  return (
    <Section title="Versions">
      <ErrorBox error={list.error} />
      <ul class="list">
        {list.items.map((v) => (
          <li key={v.id} data-testid="version-row">v{v.version_number}{v.version_number === current ? ' (current)' : ''} <small>{when(v.metadata?.created_at)}</small></li>
        ))}
      </ul>
      {list.pager}
      <div class="row">
        <label>Compare <select data-testid="version-left" value={left} onChange={(e) => setLeft(e.currentTarget.value)}>
          <option value="">—</option>{list.items.map((v) => <option key={v.id} value={v.version_number}>v{v.version_number}</option>)}
        </select></label>
        <label>with <select data-testid="version-right" value={right} onChange={(e) => setRight(e.currentTarget.value)}>
          <option value="">—</option>{list.items.map((v) => <option key={v.id} value={v.version_number}>v{v.version_number}</option>)}
        </select></label>
      </div>
      {a && b && <Diff left={JSON.stringify(inOrder(id, a.system_config), null, 2)} right={JSON.stringify(inOrder(id, b.system_config), null, 2)} />}
    </Section>
  )
}

function Diff({ left, right }: { left: string; right: string }) {
  const rows = diffLines(left.split('\n'), right.split('\n'))
  return (
    <table class="diff" data-testid="diff" aria-label="Differences between the two versions">
      <tbody>
        {rows.map((r, i) => (
          <tr key={i} class={r.kind} data-testid="diff-row" data-kind={r.kind}>
            <td class="l"><code>{r.left ?? ''}</code></td>
            <td class="r"><code>{r.right ?? ''}</code></td>
          </tr>
        ))}
      </tbody>
    </table>
  )
}

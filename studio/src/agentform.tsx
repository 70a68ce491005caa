// The agent form: the configuration's fields as controls, two-way with the JSON/YAML editor. It
// edits the parsed configuration and hands back a new object in which only the fields it touched
// changed (fields it does not know stay as they are). While the text does not parse it keeps
// showing the last configuration that did, read-only, and says why. What it offers comes from
// the deployment: GET /agent/catalog/ (providers, models, built-in tools, parameter limits), the
// company's MCP servers and knowledge bases.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, type FieldError } from './api'
import type { components } from './schema'
import { KnowledgePicker, ToolsPicker } from './agenttools'

export type Catalog = components['schemas']['AgentCatalog']
export type Obj = Record<string, unknown>

/** The object at v, or an empty one. */
export function obj(v: unknown): Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Obj) : {}
}

/** o with k set to v, or without k when v is undefined. */
export function put(o: Obj, k: string, v: unknown): Obj {
  const next = { ...o }
  if (v === undefined) delete next[k]
  else next[k] = v
  return next
}

/** The server's errors at path (the form's dotted path) or below it, the create body's prefix left aside. */
export function errorsAt(errors: FieldError[], path: string): FieldError[] {
  return errors.filter((e) => {
    const f = e.field.startsWith('system_config.') ? e.field.slice('system_config.'.length) : e.field
    return f === path || f.startsWith(path + '.')
  })
}

/** The messages of errors under a control, each with its field. */
export function FieldErrors({ errors, id }: { errors: FieldError[]; id?: string }) {
  if (!errors.length) return null
  return (
    <span id={id}>
      {errors.map((e, i) => <span key={e.field + i} class="field-err" data-testid="form-field-error" data-field={e.field}>{e.message}</span>)}
    </span>
  )
}

let catalogOnce: Promise<Catalog> | null = null
let catalogRead: Catalog | null = null

/**
 * The deployment's catalog, read once per page (again after a failure). A screen that waits for
 * it before showing the form (an agent's editor) keeps the form from growing as it arrives.
 */
export function readCatalog(): Promise<Catalog> {
  catalogOnce ??= api<Catalog>('GET', 'agent/catalog/').then((c) => (catalogRead = c), (e) => { catalogOnce = null; throw e })
  return catalogOnce
}

function useCatalog(): { catalog: Catalog | null; error: unknown } {
  const [catalog, setCatalog] = useState<Catalog | null>(catalogRead)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => { if (!catalogRead) readCatalog().then(setCatalog, setError) }, [])
  return { catalog, error }
}

const VARIABLE = /\{\{\s*variables\.([A-Za-z_][A-Za-z0-9_-]*)\s*\}\}/g

/** The prompt variables a system prompt uses, each once, in order. */
export function variablesOf(prompt: string): string[] {
  const out: string[] = []
  for (const m of prompt.matchAll(VARIABLE)) if (!out.includes(m[1])) out.push(m[1])
  return out
}

/**
 * The form over a configuration. value: the parsed configuration (undefined while the text does
 * not parse, with parseError saying why); onChange gets the configuration with the change made.
 */
export function AgentForm({ value, parseError, errors, onChange }: {
  value?: Obj; parseError?: string; errors: FieldError[]; onChange: (next: Obj) => void
}) {
  const last = useRef<Obj>(value ?? {})
  if (value) last.current = value
  const cfg = value ?? last.current
  const broken = !value
  const { catalog, error: catalogError } = useCatalog()
  const nodes = Array.isArray(cfg.agents) ? (cfg.agents as unknown[]) : null
  const [nodeIndex, setNodeIndex] = useState(0)
  const ni = nodes ? Math.min(nodeIndex, Math.max(0, nodes.length - 1)) : 0
  const node = nodes ? obj(nodes[ni]) : cfg
  const base = nodes ? `agents.${ni}` : ''
  const at = (p: string) => (base ? base + '.' + p : p)

  function set(k: string, v: unknown) {
    if (broken) return
    if (k === 'name' || k === 'memory' || !nodes) { onChange(put(cfg, k, v)); return }
    const list = nodes.slice()
    list[ni] = put(node, k, v)
    onChange({ ...cfg, agents: list })
  }
  function setNode(next: Obj) {
    if (broken) return
    if (!nodes) { onChange(next); return }
    const list = nodes.slice()
    list[ni] = next
    onChange({ ...cfg, agents: list })
  }

  return (
    <div class="agent-form" data-testid="agent-form" data-stale={broken ? 'true' : 'false'}>
      {broken && (
        <p class="notice" role="status" data-testid="form-stale">
          The configuration text does not parse, so the form shows the last valid configuration and cannot change it until the text is fixed{parseError ? ': ' + parseError : '.'}
        </p>
      )}
      <fieldset disabled={broken} class="form-body">
        <legend>Agent</legend>
        <div class="row">
          <label class="field">Name <input data-testid="form-name" value={String(cfg.name ?? '')} onInput={(e) => set('name', e.currentTarget.value || undefined)} aria-describedby="form-name-err" />
            <FieldErrors id="form-name-err" errors={errorsAt(errors, 'name')} /></label>
          {nodes && (
            <label class="field">Agent node
              <select data-testid="form-node" value={String(ni)} onChange={(e) => setNodeIndex(Number(e.currentTarget.value))}>
                {nodes.map((n, i) => <option key={i} value={String(i)}>{String(obj(n).name ?? `#${i + 1}`)}</option>)}
              </select></label>
          )}
          <label class="field">Type
            <select data-testid="form-type" value={String(node.agent_type ?? 'llm_agent')} onChange={(e) => set('agent_type', e.currentTarget.value)}>
              <option value="llm_agent">llm_agent</option>
              <option value="react_agent">react_agent</option>
            </select>
            <FieldErrors errors={errorsAt(errors, at('agent_type'))} /></label>
        </div>
        <label class="field">System prompt
          <textarea data-testid="form-prompt" rows={3} value={String(node.system_prompt ?? '')} onInput={(e) => set('system_prompt', e.currentTarget.value || undefined)} />
          <FieldErrors errors={errorsAt(errors, at('system_prompt'))} /></label>
        <Variables prompt={String(node.system_prompt ?? '')} onPrompt={(p) => set('system_prompt', p)} />
      </fieldset>
      {catalogError ? <p class="error" role="alert">The deployment's catalog could not be read, so models and tools cannot be offered: {String((catalogError as Error).message ?? catalogError)}</p> : null}
      <fieldset disabled={broken} class="form-body">
        <legend>Model</legend>
        <ModelPicker catalog={catalog} llm={obj(node.llm_config)} errors={errors} path={at('llm_config')}
          onChange={(l) => set('llm_config', Object.keys(l).length ? l : undefined)} />
      </fieldset>
      <ToolsPicker catalog={catalog} node={node} path={base} errors={errors} disabled={broken} onChange={setNode} />
      <KnowledgePicker node={node} path={base} errors={errors} disabled={broken} onChange={setNode} />
      <MemoryForm memory={cfg.memory} errors={errors} disabled={broken} onChange={(m) => set('memory', m)} />
    </div>
  )
}

/** The prompt's variables, and a way to add one (a {{ variables.name }} at the prompt's end). */
function Variables({ prompt, onPrompt }: { prompt: string; onPrompt: (p: string) => void }) {
  const [name, setName] = useState('')
  const vars = variablesOf(prompt)
  const ok = /^[A-Za-z_][A-Za-z0-9_-]*$/.test(name)
  return (
    <div class="row form-vars">
      <p class="field" data-testid="form-variables">Prompt variables (given as <code>inputs</code> when the agent runs): {vars.length ? vars.map((v) => <code key={v} data-testid="form-variable" class="chip">{v}</code>) : <span>none</span>}</p>
      <label class="field">New variable <input data-testid="form-variable-name" value={name} onInput={(e) => setName(e.currentTarget.value)} aria-describedby="form-variable-hint" /></label>
      <button type="button" data-testid="form-variable-add" disabled={!ok || vars.includes(name)}
        onClick={() => { onPrompt((prompt ? prompt.replace(/\s*$/, ' ') : '') + `{{ variables.${name} }}`); setName('') }}>Add to the prompt</button>
      <small id="form-variable-hint">Letters, digits, _ or -, not starting with a digit.</small>
    </div>
  )
}

/** The provider and model pickers and llm_config's numbers, offered from the catalog. */
function ModelPicker({ catalog, llm, errors, path, onChange }: { catalog: Catalog | null; llm: Obj; errors: FieldError[]; path: string; onChange: (l: Obj) => void }) {
  const providers = catalog?.providers ?? []
  const fallback = providers.find((p) => p.default)
  const provider = typeof llm.provider === 'string' ? llm.provider : ''
  const offered = providers.find((p) => p.name === (provider || fallback?.name))
  const unknownProvider = provider !== '' && catalog !== null && !providers.some((p) => p.name === provider)
  const model = typeof llm.model === 'string' ? llm.model : ''
  const models = offered?.models ?? []
  const unlisted = model !== '' && catalog !== null && !models.includes(model)
  return (
    <>
      <div class="row">
        <label class="field">Provider
          <select data-testid="form-provider" value={provider} onChange={(e) => onChange(put(put(llm, 'provider', e.currentTarget.value || undefined), 'model', undefined))}>
            <option value="">The deployment's default{fallback ? ` (${fallback.name})` : ''}</option>
            {providers.map((p) => <option key={p.name} value={p.name}>{p.name}</option>)}
            {unknownProvider && <option value={provider}>{provider} (not available on this deployment)</option>}
          </select>
          <FieldErrors errors={errorsAt(errors, path + '.provider')} /></label>
        <label class="field">Model
          <select data-testid="form-model" value={model} onChange={(e) => onChange(put(llm, 'model', e.currentTarget.value || undefined))}>
            <option value="">{offered?.default_model ? `The provider's default (${offered.default_model})` : "The provider's default"}</option>
            {models.map((m) => <option key={m} value={m}>{m}</option>)}
            {unlisted && <option value={model}>{model} ({unknownProvider ? 'its provider is not available here' : 'not listed for this provider'})</option>}
          </select>
          <FieldErrors errors={errorsAt(errors, path + '.model')} /></label>
      </div>
      {(unknownProvider || unlisted) && (
        <p class="notice" data-testid="form-model-unavailable">
          {unknownProvider
            ? `This deployment cannot run the provider “${provider}”: the agent's runs will be refused until another provider is picked.`
            : `The model “${model}” is not among the models this deployment lists for ${offered?.name ?? 'its provider'}; it runs only if the provider offers it.`}
        </p>
      )}
      <div class="row">
        {(catalog?.parameters ?? []).map((p) => <Param key={p.name} param={p} value={llm[p.name]} errors={errorsAt(errors, path + '.' + p.name)}
          onChange={(v) => onChange(put(llm, p.name, v))} />)}
      </div>
    </>
  )
}

type ParamSpec = Catalog['parameters'][number]

/** One number of llm_config, held to the catalog's limits (empty: the default). */
function Param({ param, value, errors, onChange }: { param: ParamSpec; value: unknown; errors: FieldError[]; onChange: (v: number | undefined) => void }) {
  const [text, setText] = useState(value === undefined ? '' : String(value))
  useEffect(() => { if (Number(text) !== value && !(text === '' && value === undefined)) setText(value === undefined ? '' : String(value)) }, [value])
  const n = Number(text)
  const bad = text.trim() === '' ? '' : !Number.isFinite(n) ? 'must be a number'
    : param.type === 'integer' && !Number.isInteger(n) ? 'must be a whole number'
    : n < param.minimum || n > param.maximum ? `must be between ${param.minimum} and ${param.maximum}` : ''
  const id = 'form-param-' + param.name
  return (
    <label class="field">{param.name}
      <input type="number" data-testid={id} value={text} min={param.minimum} max={param.maximum} step={param.type === 'integer' ? 1 : 0.1}
        placeholder={param.default != null ? `default ${param.default}` : 'provider default'} aria-invalid={bad || errors.length ? 'true' : undefined} aria-describedby={id + '-err'}
        onInput={(e) => {
          const t = e.currentTarget.value
          setText(t)
          const v = Number(t)
          if (t.trim() === '') onChange(undefined)
          else if (Number.isFinite(v)) onChange(v)
        }} />
      <span id={id + '-err'}>
        {bad && <span class="field-err" data-testid="form-param-error">{param.name} {bad}</span>}
        <FieldErrors errors={errors} />
      </span>
    </label>
  )
}

/** The configuration's memory (issue 28): on or off, shared, blocks, recall top_k, extraction. */
function MemoryForm({ memory, errors, disabled, onChange }: { memory: unknown; errors: FieldError[]; disabled: boolean; onChange: (m: Obj | undefined) => void }) {
  const on = memory !== undefined && memory !== null && obj(memory).enabled !== false
  const m = obj(memory)
  const blocks = Array.isArray(m.blocks) ? (m.blocks as unknown[]).map(obj) : []
  const recall = obj(m.recall)
  const extractOn = m.extract !== undefined && m.extract !== null && obj(m.extract).enabled !== false
  const setBlocks = (b: Obj[]) => onChange(put(m, 'blocks', b.length ? b : undefined))
  return (
    <fieldset disabled={disabled} class="form-body">
      <legend>Memory</legend>
      <label class="check"><input type="checkbox" data-testid="form-memory" checked={on}
        onChange={(e) => onChange(e.currentTarget.checked ? put(m, 'enabled', undefined) : undefined)} /> Remember each user across sessions (recall before each turn; react agents get memory tools)</label>
      <FieldErrors errors={errorsAt(errors, 'memory').filter((e) => /^(system_config\.)?memory$/.test(e.field))} />
      {on && (
        <>
          <div class="row">
            <label class="check"><input type="checkbox" data-testid="form-memory-shared" checked={m.shared === true} onChange={(e) => onChange(put(m, 'shared', e.currentTarget.checked || undefined))} /> Shared by all the company's agents</label>
            <label class="check"><input type="checkbox" data-testid="form-memory-extract" checked={extractOn} onChange={(e) => onChange(put(m, 'extract', e.currentTarget.checked ? {} : undefined))} /> Extract facts after each turn</label>
            <label class="field">Records recalled per turn (top_k)
              <input type="number" data-testid="form-memory-topk" min={0} max={20} step={1} placeholder="5" value={recall.top_k === undefined ? '' : String(recall.top_k)}
                onInput={(e) => { const t = e.currentTarget.value; const r = put(recall, 'top_k', t === '' ? undefined : Number(t)); onChange(put(m, 'recall', Object.keys(r).length ? r : undefined)) }} />
              <FieldErrors errors={errorsAt(errors, 'memory.recall')} /></label>
          </div>
          <ul class="list form-blocks">
            {blocks.map((b, i) => (
              <li key={i} data-testid="form-memory-block" class="row">
                <label class="field">Block label <input data-testid="form-memory-block-label" value={String(b.label ?? '')} onInput={(e) => setBlocks(blocks.map((x, j) => (j === i ? put(x, 'label', e.currentTarget.value) : x)))} />
                  <FieldErrors errors={errorsAt(errors, `memory.blocks.${i}.label`)} /></label>
                <label class="field">Description <input data-testid="form-memory-block-description" value={String(b.description ?? '')} onInput={(e) => setBlocks(blocks.map((x, j) => (j === i ? put(x, 'description', e.currentTarget.value || undefined) : x)))} /></label>
                <label class="field">Limit (characters) <input type="number" min={1} max={10000} placeholder="2000" data-testid="form-memory-block-limit" value={b.limit === undefined ? '' : String(b.limit)}
                  onInput={(e) => { const t = e.currentTarget.value; setBlocks(blocks.map((x, j) => (j === i ? put(x, 'limit', t === '' ? undefined : Number(t)) : x))) }} />
                  <FieldErrors errors={errorsAt(errors, `memory.blocks.${i}.limit`)} /></label>
                <button type="button" data-testid="form-memory-block-remove" aria-label={`Remove block ${String(b.label ?? i + 1)}`} onClick={() => setBlocks(blocks.filter((_, j) => j !== i))}>Remove</button>
              </li>
            ))}
          </ul>
          <button type="button" data-testid="form-memory-block-add" onClick={() => setBlocks([...blocks, { label: '' }])}>Add a block</button>
        </>
      )}
    </fieldset>
  )
}

// The agent form's pickers of what a node uses: built-in tools (from the catalog), the company's
// MCP servers with each tool offered or not and needing approval or not, function tools with a
// JSON Schema of their parameters, and knowledge bases by name. Each hands back the node with its
// tools or knowledge_bases changed and every other field as it was.
import { useEffect, useState } from 'preact/hooks'
import { api, page, type FieldError, type KnowledgeBase, type MCPServer, type MCPTools } from './api'
import { errorsAt, FieldErrors, obj, put, type Catalog, type Obj } from './agentform'

type Props = { node: Obj; path: string; errors: FieldError[]; disabled: boolean; onChange: (node: Obj) => void }

const at = (base: string, p: string) => (base ? base + '.' + p : p)

/** The first page (100) of a list, read once per mount. */
function useList<T>(path: string): { items: T[] | null; error: unknown } {
  const [items, setItems] = useState<T[] | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => { page<T>(path, 100, 0).then((p) => setItems(p.items), setError) }, [path])
  return { items, error }
}

export function ToolsPicker({ catalog, node, path, errors, disabled, onChange }: Props & { catalog: Catalog | null }) {
  const tools = Array.isArray(node.tools) ? (node.tools as unknown[]) : []
  const setTools = (t: unknown[]) => onChange(put(node, 'tools', t.length ? t : undefined))
  const builtins = catalog?.tools ?? []
  const named = tools.filter((t): t is string => typeof t === 'string')
  const unknownNamed = catalog ? named.filter((n) => !builtins.some((b) => b.name === n)) : []
  return (
    <fieldset disabled={disabled} class="form-body" data-testid="form-tools">
      <legend>Tools</legend>
      {node.agent_type !== 'react_agent' && tools.length > 0 && <p class="notice">Only a react_agent calls tools: set the type to react_agent.</p>}
      <FieldErrors errors={errorsAt(errors, at(path, 'tools')).filter((e) => !/\.tools\.\d+/.test('.' + e.field))} />
      <fieldset>
        <legend>Built-in tools</legend>
        {builtins.map((b) => {
          const i = tools.indexOf(b.name)
          return (
            <label key={b.name} class="check">
              <input type="checkbox" data-testid="form-builtin" data-name={b.name} checked={i >= 0}
                onChange={(e) => setTools(e.currentTarget.checked ? [...tools, b.name] : tools.filter((t) => t !== b.name))} />
              {' '}<code>{b.name}</code> <small>{b.description}</small>
              {i >= 0 && <FieldErrors errors={errorsAt(errors, at(path, `tools.${i}`))} />}
            </label>
          )
        })}
        {unknownNamed.map((n) => (
          <p key={n} class="notice" data-testid="form-builtin-unknown">
            <code>{n}</code> is not a built-in tool of this deployment. <button type="button" onClick={() => setTools(tools.filter((t) => t !== n))}>Remove {n}</button>
          </p>
        ))}
      </fieldset>
      <MCPPicker tools={tools} path={path} errors={errors} setTools={setTools} />
      <FunctionTools tools={tools} path={path} errors={errors} setTools={setTools} />
    </fieldset>
  )
}

type ToolsProps = { tools: unknown[]; path: string; errors: FieldError[]; setTools: (t: unknown[]) => void }

/** The company's MCP servers: a server used or not, and each of its tools offered and approved. */
function MCPPicker({ tools, path, errors, setTools }: ToolsProps) {
  const { items: servers, error } = useList<MCPServer>('mcp-servers/')
  const bindings = tools.map((t, i) => ({ t: obj(t), i })).filter((b) => b.t.type === 'mcp')
  const find = (s: MCPServer) => bindings.find((b) => b.t.server === s.name || b.t.server === s.id)
  const orphans = servers ? bindings.filter((b) => !servers.some((s) => b.t.server === s.name || b.t.server === s.id)) : []
  return (
    <fieldset>
      <legend>MCP servers</legend>
      {error ? <p class="error">The MCP servers could not be read.</p> : null}
      {servers && servers.length === 0 && <p class="empty">No MCP servers yet: register one in Settings.</p>}
      {(servers ?? []).map((s) => {
        const b = find(s)
        return <MCPServerTools key={s.id} server={s} binding={b?.t} errors={b ? errorsAt(errors, at(path, `tools.${b.i}`)) : []}
          onChange={(next) => {
            if (!b) { if (next) setTools([...tools, next]); return }
            setTools(next ? tools.map((t, j) => (j === b.i ? next : t)) : tools.filter((_, j) => j !== b.i))
          }} />
      })}
      {orphans.map((b) => (
        <p key={b.i} class="notice" data-testid="form-mcp-unknown">
          The MCP server “{String(b.t.server)}” is not one of your company's servers. <button type="button" onClick={() => setTools(tools.filter((_, j) => j !== b.i))}>Remove it</button>
          <FieldErrors errors={errorsAt(errors, at(path, `tools.${b.i}`))} />
        </p>
      ))}
    </fieldset>
  )
}

/** Which of the binding's tools need approval: every one, the listed ones, or none. */
function approvals(binding: Obj): 'all' | string[] {
  const r = binding.require_approval
  if (r === 'always') return 'all'
  const always = obj(r).always
  return Array.isArray(always) ? (always as string[]) : []
}

function MCPServerTools({ server, binding, errors, onChange }: { server: MCPServer; binding?: Obj; errors: FieldError[]; onChange: (b: Obj | undefined) => void }) {
  const [tools, setTools] = useState<MCPTools['tools'] | null>(null)
  const [error, setError] = useState<unknown>(null)
  useEffect(() => {
    if (!binding || tools) return
    api<MCPTools>('GET', `mcp-servers/${server.id}/tools/`).then((t) => setTools(t.tools), setError)
  }, [binding !== undefined])
  const names = (tools ?? []).map((t) => t.name)
  const allowed = binding && Array.isArray(binding.allowed_tools) ? (binding.allowed_tools as string[]) : null
  const offered = (n: string) => allowed === null || allowed.includes(n)
  const need = binding ? approvals(binding) : []
  const needs = (n: string) => need === 'all' || need.includes(n)

  function write(allow: string[] | null, approve: string[]) {
    if (!binding) return
    let b = put(binding, 'allowed_tools', allow === null || (tools && allow.length === names.length && names.every((n) => allow.includes(n))) ? undefined : allow)
    const offeredNow = allow ?? names
    const all = offeredNow.length > 0 && offeredNow.every((n) => approve.includes(n))
    b = put(b, 'require_approval', approve.length === 0 ? undefined : all && binding.require_approval === 'always' ? 'always' : { always: approve })
    onChange(b)
  }
  const label = `Use ${server.name}`
  return (
    <div class="mcp-pick" data-testid="form-mcp-server" data-name={server.name}>
      <label class="check"><input type="checkbox" data-testid="form-mcp-use" checked={!!binding}
        onChange={(e) => onChange(e.currentTarget.checked ? { type: 'mcp', server: server.name } : undefined)} /> {label} <small>{server.tool_count} tools · {server.status}</small></label>
      <FieldErrors errors={errors} />
      {binding && error ? <p class="error">The tools of {server.name} could not be read.</p> : null}
      {binding && tools && (
        <table class="grid" aria-label={`Tools of ${server.name}`}>
          <thead><tr><th scope="col">Tool</th><th scope="col">Offered to the model</th><th scope="col">Needs approval</th></tr></thead>
          <tbody>
            {tools.map((t) => (
              <tr key={t.name} data-testid="form-mcp-tool" data-name={t.name}>
                <td><code>{t.name}</code> <small>{t.description}</small></td>
                <td><input type="checkbox" data-testid="form-mcp-offer" aria-label={`Offer ${t.name}`} checked={offered(t.name)}
                  onChange={(e) => write(e.currentTarget.checked ? [...(allowed ?? names).filter((n) => n !== t.name), t.name] : (allowed ?? names).filter((n) => n !== t.name),
                    need === 'all' ? names : need)} /></td>
                <td><input type="checkbox" data-testid="form-mcp-approval" aria-label={`${t.name} needs approval`} checked={needs(t.name)} disabled={!offered(t.name)}
                  onChange={(e) => { const cur = need === 'all' ? names : need; write(allowed, e.currentTarget.checked ? [...cur.filter((n) => n !== t.name), t.name] : cur.filter((n) => n !== t.name)) }} /></td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  )
}

/** Tools the client runs: a name, a description and a JSON Schema of the arguments, checked as typed. */
function FunctionTools({ tools, path, errors, setTools }: ToolsProps) {
  const fns = tools.map((t, i) => ({ t: obj(t), i })).filter((f) => f.t.type === 'function')
  return (
    <fieldset>
      <legend>Function tools (run by your client)</legend>
      {fns.map((f) => (
        <FunctionTool key={f.i} fn={f.t} errors={errorsAt(errors, at(path, `tools.${f.i}`))} prefix={at(path, `tools.${f.i}`)}
          onChange={(next) => setTools(next ? tools.map((t, j) => (j === f.i ? next : t)) : tools.filter((_, j) => j !== f.i))} />
      ))}
      <button type="button" data-testid="form-fn-add"
        onClick={() => setTools([...tools, { type: 'function', name: '', parameters: { type: 'object', properties: {} } }])}>Add a function tool</button>
    </fieldset>
  )
}

/** Why text is not a function's parameters schema, or ''. */
export function schemaProblem(text: string): { value?: Obj; problem: string } {
  let v: unknown
  try { v = JSON.parse(text) } catch (e) { return { problem: 'Not valid JSON: ' + (e as Error).message } }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return { problem: 'The parameters must be a JSON Schema object' }
  const o = v as Obj
  if ('type' in o && o.type !== 'object') return { problem: 'type must be "object": a function\'s arguments are an object' }
  if ('properties' in o && (typeof o.properties !== 'object' || o.properties === null || Array.isArray(o.properties))) return { problem: 'properties must be an object of schemas' }
  if ('required' in o && !(Array.isArray(o.required) && o.required.every((r) => typeof r === 'string'))) return { problem: 'required must be a list of property names' }
  return { value: o, problem: '' }
}

function FunctionTool({ fn, errors, prefix, onChange }: { fn: Obj; errors: FieldError[]; prefix: string; onChange: (f: Obj | undefined) => void }) {
  const shown = JSON.stringify(fn.parameters ?? { type: 'object', properties: {} }, null, 2)
  const [text, setText] = useState(shown)
  // Follows the configuration when it changes elsewhere (the JSON editor), not while typing here.
  useEffect(() => { const p = schemaProblem(text); if (!p.value || JSON.stringify(p.value) !== JSON.stringify(fn.parameters ?? p.value)) setText(shown) }, [shown])
  const check = schemaProblem(text)
  const name = String(fn.name ?? '')
  const nameBad = name !== '' && !/^[a-zA-Z0-9_-]{1,64}$/.test(name)
  const id = 'fn-' + prefix.replace(/\./g, '-')
  return (
    <div class="fn-tool" data-testid="form-fn">
      <div class="row">
        <label class="field">Function name <input data-testid="form-fn-name" value={name} aria-describedby={id + '-name-err'} onInput={(e) => onChange(put(fn, 'name', e.currentTarget.value))} />
          <span id={id + '-name-err'}>{nameBad && <span class="field-err">1 to 64 letters, digits, _ or -</span>}<FieldErrors errors={errorsAt(errors, prefix + '.name')} /></span></label>
        <label class="field">Description <input data-testid="form-fn-description" value={String(fn.description ?? '')} onInput={(e) => onChange(put(fn, 'description', e.currentTarget.value || undefined))} /></label>
        <button type="button" data-testid="form-fn-remove" aria-label={`Remove function ${name || 'tool'}`} onClick={() => onChange(undefined)}>Remove</button>
      </div>
      <label class="field">Parameters (JSON Schema)
        <textarea class="code" rows={6} spellcheck={false} data-testid="form-fn-parameters" value={text} aria-invalid={check.problem ? 'true' : undefined} aria-describedby={id + '-schema-err'}
          onInput={(e) => { const t = e.currentTarget.value; setText(t); const p = schemaProblem(t); if (p.value) onChange(put(fn, 'parameters', p.value)) }} /></label>
      <span id={id + '-schema-err'}>
        {check.problem && <span class="field-err" data-testid="form-fn-error">{check.problem} (the configuration keeps the last valid schema)</span>}
        <FieldErrors errors={errorsAt(errors, prefix + '.parameters')} />
      </span>
    </div>
  )
}

/** The company's knowledge bases, picked by name; an entry naming one that is not listed stays, marked. */
export function KnowledgePicker({ node, path, errors, disabled, onChange }: Props) {
  const { items: kbs, error } = useList<KnowledgeBase>('knowledge-bases/')
  const entries = Array.isArray(node.knowledge_bases) ? (node.knowledge_bases as unknown[]) : []
  const idOf = (e: unknown) => String(obj(e).knowledge_base_id ?? obj(e).id ?? '')
  const set = (list: unknown[]) => onChange(put(node, 'knowledge_bases', list.length ? list : undefined))
  const orphans = kbs ? entries.map((e, i) => ({ e: obj(e), i })).filter((x) => !kbs.some((k) => k.id === idOf(x.e))) : []
  return (
    <fieldset disabled={disabled} class="form-body" data-testid="form-kbs">
      <legend>Knowledge bases</legend>
      <FieldErrors errors={errorsAt(errors, at(path, 'knowledge_bases')).filter((e) => !/knowledge_bases\.\d+/.test(e.field))} />
      {error ? <p class="error">The knowledge bases could not be read.</p> : null}
      {kbs && kbs.length === 0 && <p class="empty">No knowledge bases yet: build one in Knowledge.</p>}
      {(kbs ?? []).map((k) => {
        const i = entries.findIndex((e) => idOf(e) === k.id)
        return (
          <label key={k.id} class="check">
            <input type="checkbox" data-testid="form-kb" data-id={k.id} checked={i >= 0}
              onChange={(e) => set(e.currentTarget.checked
                ? [...entries, { name: k.name, knowledge_base_type: 'opensearch', knowledge_base_id: k.id }]
                : entries.filter((x) => idOf(x) !== k.id))} />
            {' '}{k.name} <small>{k.status}</small>
            {i >= 0 && <FieldErrors errors={errorsAt(errors, at(path, `knowledge_bases.${i}`))} />}
          </label>
        )
      })}
      {orphans.map((x) => (
        <p key={x.i} class="notice" data-testid="form-kb-unknown">
          “{String(x.e.name ?? idOf(x.e))}” ({idOf(x.e)}) is not a knowledge base you can read. <button type="button" onClick={() => set(entries.filter((_, j) => j !== x.i))}>Remove it</button>
          <FieldErrors errors={errorsAt(errors, at(path, `knowledge_bases.${x.i}`))} />
        </p>
      ))}
    </fieldset>
  )
}

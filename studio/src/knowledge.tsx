// Knowledge: files (drag and drop; large ones through the presigned upload with a progress bar),
// collections, knowledge bases with chunking and embedding options, their live status, sync,
// delete, and search with the strategy and the scores.
import { useEffect, useRef, useState } from 'preact/hooks'
import { api, postForm, putWithProgress, type Collection, type FileRecord, type KnowledgeBase, type KnowledgeBaseCheck, type KnowledgeBaseDetail, type KnowledgeBaseState, type PendingUpload, type SearchHit, type SearchResult } from './api'
import { Confirm, ErrorBox, messageOf, Section, Spinner, usePaged, when } from './ui'


const SMALL = 4 * 1024 * 1024

/** A size for people: 812 B, 4.9 KB, 23 MB (binary units, one decimal under ten). */
export function size(n: number): string {
  if (n < 1024) return `${n} B`
  const units = ['KB', 'MB', 'GB', 'TB']
  let v = n / 1024
  let i = 0
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++ }
  return `${v < 10 ? v.toFixed(1) : Math.round(v)} ${units[i]}`
}

/** Whether a paged list has answered once (before that, its space is held: .hold-list, .hold-table). */
function useLoaded(list: { loading: boolean; error: unknown }): boolean {
  const asked = useRef(false)
  if (list.loading) asked.current = true
  return (asked.current && !list.loading) || list.error != null
}


export function Knowledge() {
  const [n, setN] = useState(0)
  const bump = () => setN((x) => x + 1)
  return (
    <div class="stack">
      <Files reload={n} onChange={bump} />
      <Collections reload={n} onChange={bump} />
      <KnowledgeBases reload={n} onChange={bump} />
    </div>
  )
}

let uploadSeq = 0

interface Upload { id: number; name: string; sent: number; total: number; error?: string; done?: boolean }

function Files({ reload, onChange }: { reload: number; onChange: () => void }) {
  const list = usePaged<FileRecord>('files/', 20, '', reload)
  const loaded = useLoaded(list)
  const [uploads, setUploads] = useState<Upload[]>([])
  const [tags, setTags] = useState('')
  const [over, setOver] = useState(false)

  async function upload(files: FileList | File[]) {
    for (const f of Array.from(files)) {
      const id = ++uploadSeq
      setUploads((us) => [...us, { id, name: f.name, sent: 0, total: f.size }])
      const set = (p: Partial<Upload>) => setUploads((us) => us.map((x) => (x.id === id ? { ...x, ...p } : x)))
      try {
        const tagList = tags.split(',').map((t) => t.trim()).filter(Boolean)
        if (f.size <= SMALL) {
          const form = new FormData()
          form.append('file', f, f.name)
          if (tagList.length) form.append('tags', tagList.join(','))
          await postForm('files/', form)
        } else {
          const p = await api<PendingUpload>('POST', 'files/uploads/', { name: f.name, size: f.size, media_type: f.type || undefined })
          await putWithProgress(p.upload_url, p.headers, f, (sent, total) => set({ sent, total }))
          await api('POST', `files/${p.file_id}/complete/`)
        }
        set({ sent: f.size, done: true })
      } catch (e) {
        set({ error: messageOf(e) })
      }
    }
    onChange()
  }

  const [error, setError] = useState<unknown>(null)
  async function remove(f: FileRecord) {
    setError(null)
    try { await api('DELETE', `files/${f.id}/`); onChange() } catch (e) { setError(e) }
  }

  return (
    <Section title="Files">
      <div class={'drop' + (over ? ' over' : '')} data-testid="upload-drop"
        onDragOver={(e) => { e.preventDefault(); setOver(true) }} onDragLeave={() => setOver(false)}
        onDrop={(e) => { e.preventDefault(); setOver(false); if (e.dataTransfer?.files) upload(e.dataTransfer.files) }}>
        <p>Drop files here, or</p>
        <label class="button">Choose files
          <input type="file" multiple class="sr-only" data-testid="upload-input" onChange={(e) => { const fs = e.currentTarget.files; if (fs) upload(Array.from(fs)); e.currentTarget.value = '' }} />
        </label>
        <label>Tags (comma-separated) <input value={tags} onInput={(e) => setTags(e.currentTarget.value)} /></label>
      </div>
      {uploads.length > 0 && (
        <ul class="uploads" aria-live="polite">
          {uploads.map((u) => (
            <li key={u.id} data-testid="upload-row">
              <span class="name">{u.name}</span>{' '}
              <progress max={u.total || 1} value={u.sent} aria-label={`Upload of ${u.name}`} />{' '}
              {u.error ? <span class="error">{u.error}</span> : u.done ? `uploaded · ${size(u.total)}` : `${size(u.sent)} of ${size(u.total)} · ${Math.round((u.sent / (u.total || 1)) * 100)}%`}
            </li>
          ))}
        </ul>
      )}
      <ErrorBox error={error} />
      <ErrorBox error={list.error} />
      {/* Three rows' space is held while the files load, and the table appears whole once they
          have: its columns then never re-flow under the reader's eyes. */}
      <div class="hold-table">{loaded && <table class="grid">
        <thead><tr><th>Name</th><th>Type</th><th>Size</th><th>Status</th><th>Tags</th><th>Added</th><th><span class="sr-only">Actions</span></th></tr></thead>
        <tbody>
          {list.items.map((f) => (
            <tr key={f.id} data-testid="file-row">
              <td>{f.original_filename}</td><td>{f.file_type}</td><td title={`${f.size_bytes.toLocaleString()} bytes`}>{size(f.size_bytes)}</td>
              <td>{f.status}{f.error ? `: ${f.error}` : ''}</td><td>{f.tags?.join(', ')}</td><td>{when(f.created_at)}</td>
              <td><Confirm label="Delete" name={`Delete ${f.original_filename}`} question="From every knowledge base and collection?" onConfirm={() => remove(f)} /></td>
            </tr>
          ))}
          {loaded && list.items.length === 0 && <tr class="empty" data-testid="empty"><td colSpan={7}>No files yet. Drop files above or choose them; then group them in a collection or build a knowledge base of them below.</td></tr>}
        </tbody>
      </table>}</div>
      {list.pager}
    </Section>
  )
}

function Collections({ reload, onChange }: { reload: number; onChange: () => void }) {
  const list = usePaged<Collection>('collections/', 20, '', reload)
  const loaded = useLoaded(list)
  const files = usePaged<FileRecord>('files/', 100, '', reload)
  const filesLoaded = useLoaded(files)
  const [name, setName] = useState('')
  const [picked, setPicked] = useState<string[]>([])
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  async function create(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const c = await api<Collection>('POST', 'collections/', { name })
      if (picked.length) await api('POST', `collections/${c.id}/files/`, { file_ids: picked })
      setName('')
      setPicked([])
      onChange()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <Section title="Collections">
      <ErrorBox error={list.error} />
      <ul class="list hold-list">
        {list.items.map((c) => <li key={c.id}><strong>{c.name}</strong> <small>{c.data_source_count} files · {c.status}</small></li>)}
        {loaded && list.items.length === 0 && <li class="empty" data-testid="empty">No collections yet. A collection groups files: upload files above, then name a collection below and tick its files.</li>}
      </ul>
      {list.pager}
      <form onSubmit={create} class="editor">
        <label>New collection <input data-testid="collection-name" value={name} onInput={(e) => setName(e.currentTarget.value)} required /></label>
        <fieldset>
          <legend>Files in it</legend>
          {!filesLoaded && files.items.length === 0 && <span class="check" aria-hidden="true">&nbsp;</span>}
          {files.items.map((f) => (
            <label key={f.id} class="check" data-testid="collection-file"><input type="checkbox" checked={picked.includes(f.id)} onChange={(e) => setPicked(e.currentTarget.checked ? [...picked, f.id] : picked.filter((x) => x !== f.id))} /> {f.original_filename}</label>
          ))}
        </fieldset>
        <button type="submit" data-testid="collection-create" disabled={busy}>Create collection</button>
        {busy && <Spinner label="Creating" />}
        <ErrorBox error={error} />
      </form>
    </Section>
  )
}

function KnowledgeBases({ reload, onChange }: { reload: number; onChange: () => void }) {
  const list = usePaged<KnowledgeBase>('knowledge-bases/', 20, '', reload)
  const loaded = useLoaded(list)
  const colls = usePaged<Collection>('collections/', 100, '', reload)
  const files = usePaged<FileRecord>('files/', 100, '', reload)
  const [selected, setSelected] = useState<string | null>(null)
  const empty = { name: '', source: 'collection', collection: '', files: [] as string[], chunk_size: '', chunk_overlap: '', split_by: '', provider: '', model: '' }
  const [form, setForm] = useState(empty)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)
  async function create(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const chunking: Record<string, unknown> = {}
      if (form.chunk_size) chunking.chunk_size = Number(form.chunk_size)
      if (form.chunk_overlap) chunking.chunk_overlap = Number(form.chunk_overlap)
      if (form.split_by) chunking.split_by = form.split_by
      const embedding: Record<string, unknown> = {}
      if (form.provider) embedding.provider = form.provider
      if (form.model) embedding.model = form.model
      const body: Record<string, unknown> = { name: form.name, processing_engine: 'opensearch' }
      if (form.source === 'files') body.selected_datasources = form.files
      else body.selected_collections = form.collection ? [form.collection] : []
      if (Object.keys(chunking).length) body.chunking_strategy = chunking
      if (Object.keys(embedding).length) body.embedding_config = embedding
      const kb = await api<KnowledgeBaseDetail>('POST', 'knowledge-bases/', body)
      setSelected(kb.id)
      setForm(empty)
      onChange()
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  const f = (k: 'name' | 'chunk_size' | 'chunk_overlap' | 'model') => ({ value: form[k], onInput: (e: Event) => setForm({ ...form, [k]: (e.currentTarget as HTMLInputElement).value }) })
  return (
    <Section title="Knowledge bases">
      <ErrorBox error={list.error} />
      <ul class="list hold-list">
        {list.items.map((kb) => (
          <li key={kb.id} aria-current={selected === kb.id ? 'true' : undefined}>
            <button type="button" class="linklike" onClick={() => setSelected(kb.id)}>{kb.name}</button> <small>{kb.status} · {when(kb.created_at)}</small>
          </li>
        ))}
        {loaded && list.items.length === 0 && <li class="empty" data-testid="empty">No knowledge bases yet. Upload files above, then create a knowledge base of them below; agents search it once it is completed.</li>}
      </ul>
      {list.pager}
      {selected && <KBDetail key={selected} id={selected} onChange={onChange} onGone={() => { setSelected(null); onChange() }} />}
      <form onSubmit={create} class="editor">
        <h3>New knowledge base</h3>
        <div class="row">
          <label>Name <input data-testid="kb-name" {...f('name')} required /></label>
          {form.source === 'collection' && (
            <label>Collection
              <select data-testid="kb-collection" value={form.collection} onChange={(e) => setForm({ ...form, collection: e.currentTarget.value })} required>
                <option value="">— choose —</option>
                {colls.items.map((c) => <option key={c.id} value={c.id}>{c.name}</option>)}
              </select>
            </label>
          )}
        </div>
        <fieldset>
          <legend>Built from</legend>
          <label class="check"><input type="radio" name="kb-source" data-testid="kb-source-collection" checked={form.source === 'collection'} onChange={() => setForm({ ...form, source: 'collection' })} /> a collection</label>
          <label class="check"><input type="radio" name="kb-source" data-testid="kb-source-files" checked={form.source === 'files'} onChange={() => setForm({ ...form, source: 'files' })} /> files</label>
          {form.source === 'files' && (
            <div>
              {files.items.map((x) => (
                <label key={x.id} class="check" data-testid="kb-file"><input type="checkbox" checked={form.files.includes(x.id)} onChange={(e) => setForm({ ...form, files: e.currentTarget.checked ? [...form.files, x.id] : form.files.filter((y) => y !== x.id) })} /> {x.original_filename}</label>
              ))}
              {!files.loading && files.items.length === 0 && <p class="empty">No files yet: upload them above.</p>}
            </div>
          )}
        </fieldset>
        <fieldset class="row">
          <legend>Chunking (empty: the defaults)</legend>
          <label>Size <input type="number" min="15" {...f('chunk_size')} /></label>
          <label>Overlap <input type="number" min="0" {...f('chunk_overlap')} /></label>
          <label>Split by <select value={form.split_by} onChange={(e) => setForm({ ...form, split_by: e.currentTarget.value })}>
            <option value="">default</option><option value="char">char</option><option value="word">word</option><option value="token">token</option>
          </select></label>
        </fieldset>
        <fieldset class="row">
          <legend>Embedding (empty: the deployment's default)</legend>
          <label>Provider <select value={form.provider} onChange={(e) => setForm({ ...form, provider: e.currentTarget.value })}>
            <option value="">default</option><option value="local">local</option><option value="bedrock">bedrock</option><option value="openai">openai</option>
          </select></label>
          <label>Model <input {...f('model')} /></label>
        </fieldset>
        <button type="submit" data-testid="kb-create" disabled={busy || (form.source === 'files' && form.files.length === 0)}>Create knowledge base</button>
        {busy && <Spinner label="Creating" />}
        <ErrorBox error={error} />
      </form>
    </Section>
  )
}

const FINAL = new Set(['completed', 'failed', 'partially_completed', 'error'])

/** "embedding · 2/3 files ingested, 1 failed, 10/14 chunks": one string, re-rendered as one text. */
function counts(kb: KnowledgeBaseState): string {
  const meta = kb.processing_metadata ?? {}
  const failed = kb.failed_datasources?.length ?? 0
  let s = `${kb.ingested_datasources?.length ?? 0}/${kb.total_datasources ?? 0} files ingested`
  if (failed) s += `, ${failed} failed`
  if (meta.total_chunks) s += meta.processed_chunks && meta.processed_chunks < meta.total_chunks ? `, ${meta.processed_chunks}/${meta.total_chunks} chunks` : `, ${meta.total_chunks} chunks`
  return meta.phase && !FINAL.has(kb.status) ? `${meta.phase} · ${s}` : s
}

function KBDetail({ id, onChange, onGone }: { id: string; onChange: () => void; onGone: () => void }) {
  const [kb, setKb] = useState<KnowledgeBaseState | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [tick, setTick] = useState(0)
  // Live status: check_status every 2 s until the knowledge base settles.
  useEffect(() => {
    let live = true
    api<KnowledgeBaseCheck>('GET', `knowledge-bases/${id}/check_status/`)
      .then((r) => {
        if (!live) return
        setKb(r.knowledge_base)
        if (!FINAL.has(r.knowledge_base.status)) setTimeout(() => live && setTick((t) => t + 1), 2000)
        else onChange()
      })
      .catch((e) => live && setError(e))
    return () => { live = false }
  }, [id, tick])
  async function sync() {
    try { await api('POST', `knowledge-bases/${id}/sync/`); setTick((t) => t + 1) } catch (e) { setError(e) }
  }
  async function remove() {
    try { await api('DELETE', `knowledge-bases/${id}/`); onGone() } catch (e) { setError(e) }
  }
  if (error) return <ErrorBox error={error} />
  if (!kb) return <Spinner />
  // The errors are keyed by datasource id: shown by the file's name, with the reason.
  const names = new Map([...(kb.ingested_datasources ?? []), ...(kb.failed_datasources ?? [])].map((d) => [d.id, d.name]))
  const errors = Object.entries(kb.datasource_errors ?? {})
  return (
    <div class="kb" aria-live="polite">
      <h3>{kb.name}</h3>
      <p>Status <strong data-testid="kb-status" data-status={kb.status}>{kb.status}</strong>{' '}
        <progress max={100} value={kb.progress ?? (FINAL.has(kb.status) ? 100 : 0)} aria-label="Ingestion progress" />{' '}
        <span data-testid="kb-counts">{counts(kb)}</span>
        {!FINAL.has(kb.status) && <Spinner label="Ingesting" />}
      </p>
      {kb.error && <p class="error">{kb.error}</p>}
      {errors.length > 0 && <ul class="field-errors">{errors.map(([ds, why]) => <li key={ds}><code>{names.get(ds) ?? ds}</code>: {why}</li>)}</ul>}
      <p><button type="button" onClick={sync}>Sync</button> <Confirm label="Delete" question="Delete this knowledge base? Its files and collections remain." testid="kb-delete" onConfirm={remove} /></p>
      <Search id={id} />
    </div>
  )
}

function Search({ id }: { id: string }) {
  const [query, setQuery] = useState('')
  const [strategy, setStrategy] = useState('dense')
  const [topK, setTopK] = useState('5')
  const [hits, setHits] = useState<SearchHit[] | null>(null)
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState<unknown>(null)
  async function search(e: Event) {
    e.preventDefault()
    setBusy(true)
    setError(null)
    try {
      const r = await api<SearchResult>('POST', `knowledge-bases/${id}/search/`, { query, strategy, top_k: Number(topK) })
      setHits(r.results)
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return (
    <form onSubmit={search} class="editor" role="search">
      <div class="row">
        <label>Search <input data-testid="search-input" value={query} onInput={(e) => setQuery(e.currentTarget.value)} required /></label>
        <label>Strategy <select value={strategy} onChange={(e) => setStrategy(e.currentTarget.value)}>
          <option>dense</option><option>bm25</option><option>hybrid</option><option>hybrid_rrf</option>
        </select></label>
        <label>Top k <input type="number" min="1" max="50" value={topK} onInput={(e) => setTopK(e.currentTarget.value)} /></label>
        <button type="submit" disabled={busy}>Search</button>
      </div>
      {busy && <Spinner label="Searching" />}
      <ErrorBox error={error} />
      {hits && (
        <ol class="hits" aria-live="polite">
          {hits.map((h, i) => (
            <li key={i} data-testid="search-result"><strong>{h.file_name}</strong> <small>chunk {h.chunk_index} · score {h.score.toFixed(4)}</small><p class="plain">{h.text}</p></li>
          ))}
          {hits.length === 0 && <li class="empty">Nothing found.</li>}
        </ol>
      )}
    </form>
  )
}

// Knowledge › Knowledge bases: the list and a new one (from files or a collection, with chunking
// and embedding options); one opened (/studio/knowledge/bases/<id>) shows its live status, sync,
// delete, search, and its files, each opening its chunks as indexed, in document order
// (/studio/knowledge/bases/<id>/chunks?file=<file id>).
import { useEffect, useState } from 'preact/hooks'
import { api, type Collection, type FileRecord, type KnowledgeBase, type KnowledgeBaseCheck, type KnowledgeBaseDetail, type KnowledgeBaseState, type SearchHit, type SearchResult } from './api'
import { useLoaded } from './knowledge'
import { navigate, ROOT } from './router'
import type { components } from './schema'
import { Confirm, ErrorBox, Section, Spinner, usePaged, when } from './ui'

/** One chunk of a file as GET …/chunks/ answers it. */
type Chunk = components['schemas']['Chunk']

/** The company's knowledge bases, each opening its own screen, and the form of a new one. */
export function KnowledgeBases() {
  const list = usePaged<KnowledgeBase>('knowledge-bases/', 20)
  const loaded = useLoaded(list)
  const colls = usePaged<Collection>('collections/', 100)
  const files = usePaged<FileRecord>('files/', 100)
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
      setForm(empty)
      navigate(ROOT + 'knowledge/bases/' + kb.id)
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
          <li key={kb.id} data-testid="kb-row">
            <a href={ROOT + 'knowledge/bases/' + kb.id} data-testid="kb-link">{kb.name}</a> <small>{kb.status} · {kb.datasource_count} files · {when(kb.created_at)}</small>
          </li>
        ))}
        {loaded && list.items.length === 0 && <li class="empty" data-testid="empty">No knowledge bases yet. Upload files under Files, then create a knowledge base of them below; agents search it once it is completed.</li>}
      </ul>
      {list.pager}
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
              {!files.loading && files.items.length === 0 && <p class="empty">No files yet: upload them under Files.</p>}
            </div>
          )}
        </fieldset>
        <fieldset class="row">
          <legend>Chunking (empty: the defaults)</legend>
          <label>Size <input type="number" min="15" data-testid="kb-chunk-size" {...f('chunk_size')} /></label>
          <label>Overlap <input type="number" min="0" data-testid="kb-chunk-overlap" {...f('chunk_overlap')} /></label>
          <label>Split by <select data-testid="kb-split-by" value={form.split_by} onChange={(e) => setForm({ ...form, split_by: e.currentTarget.value })}>
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

/** One knowledge base: its live status, sync, delete, search, and its files with their chunks. */
export function KBDetail({ id }: { id: string }) {
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
      })
      .catch((e) => live && setError(e))
    return () => { live = false }
  }, [id, tick])
  async function sync() {
    try { await api('POST', `knowledge-bases/${id}/sync/`); setTick((t) => t + 1) } catch (e) { setError(e) }
  }
  async function remove() {
    try { await api('DELETE', `knowledge-bases/${id}/`); navigate(ROOT + 'knowledge/bases') } catch (e) { setError(e) }
  }
  const back = <p><a href={ROOT + 'knowledge/bases'} data-testid="kb-back">← All knowledge bases</a></p>
  if (error) return <div>{back}<ErrorBox error={error} /></div>
  // The errors are keyed by datasource id: shown by the file's name, with the reason.
  const names = new Map([...(kb?.ingested_datasources ?? []), ...(kb?.failed_datasources ?? [])].map((d) => [d.id, d.name]))
  const errors = Object.entries(kb?.datasource_errors ?? {})
  const settled = kb != null && FINAL.has(kb.status)
  return (
    <div class="stack">
      {back}
      <Section title={kb ? kb.name : 'Knowledge base'}>
        {!kb ? <p><Spinner /></p> : (
          <div class="kb" aria-live="polite">
            <p>Status <strong data-testid="kb-status" data-status={kb.status}>{kb.status}</strong>{' '}
              <progress max={100} value={kb.progress ?? (settled ? 100 : 0)} aria-label="Ingestion progress" />{' '}
              <span data-testid="kb-counts">{counts(kb)}</span>
              {!settled && <Spinner label="Ingesting" />}
            </p>
            {kb.error && <p class="error">{kb.error}</p>}
            {errors.length > 0 && <ul class="field-errors">{errors.map(([ds, why]) => <li key={ds}><code>{names.get(ds) ?? ds}</code>: {why}</li>)}</ul>}
            <p><button type="button" onClick={sync}>Sync</button> <Confirm label="Delete" question="Delete this knowledge base? Its files and collections remain." testid="kb-delete" onConfirm={remove} /></p>
          </div>
        )}
        <Sources id={id} settled={settled} status={kb?.status ?? ''} />
        <Search id={id} />
      </Section>
    </div>
  )
}

/** The files of a knowledge base as its last run left them, each opening its chunks. */
function Sources({ id, settled, status }: { id: string; settled: boolean; status: string }) {
  const [detail, setDetail] = useState<KnowledgeBaseDetail | null>(null)
  // Read again when the run settles: the chunk counts are the run's.
  useEffect(() => {
    let live = true
    api<KnowledgeBaseDetail>('GET', `knowledge-bases/${id}/`).then((d) => live && setDetail(d), () => {})
    return () => { live = false }
  }, [id, settled, status])
  const rows = Object.values(detail?.datasource_snapshots ?? {}).sort((a, b) => a.name.localeCompare(b.name))
  return (
    <div class="hold-table">{detail && <table class="grid">
      <caption class="sr-only">Files of the knowledge base</caption>
      <thead><tr><th>File</th><th>Ingestion</th><th>Chunks</th><th><span class="sr-only">Open</span></th></tr></thead>
      <tbody>
        {rows.map((d) => (
          <tr key={d.id} data-testid="kb-source">
            <td>{d.name}</td><td>{d.ingestion_status}{d.error ? `: ${d.error}` : ''}</td><td>{d.chunks}</td>
            <td>{d.chunks > 0 && <a href={`${ROOT}knowledge/bases/${id}/chunks?file=${encodeURIComponent(d.id)}`} data-testid="kb-chunks-link" aria-label={`Chunks of ${d.name}`}>Chunks</a>}</td>
          </tr>
        ))}
        {rows.length === 0 && <tr class="empty"><td colSpan={4}>No files yet: the run has not resolved them.</td></tr>}
      </tbody>
    </table>}</div>
  )
}

/** One file's chunks in a knowledge base, as indexed, in document order, a page at a time. */
export function Chunks({ kb, query }: { kb: string; query: URLSearchParams }) {
  const file = query.get('file') ?? ''
  const [detail, setDetail] = useState<KnowledgeBaseDetail | null>(null)
  useEffect(() => {
    let live = true
    api<KnowledgeBaseDetail>('GET', `knowledge-bases/${kb}/`).then((d) => live && setDetail(d), () => {})
    return () => { live = false }
  }, [kb])
  const list = usePaged<Chunk>(file ? `knowledge-bases/${kb}/chunks/?file_id=${encodeURIComponent(file)}` : null, 20)
  const loaded = useLoaded(list)
  const source = detail?.datasource_snapshots?.[file]
  const name = source?.name ?? list.items[0]?.file_name ?? 'File'
  return (
    <div class="stack">
      <p><a href={ROOT + 'knowledge/bases/' + kb} data-testid="chunks-back">← {detail ? detail.name : 'The knowledge base'}</a></p>
      <Section title={`Chunks of ${name}`}>
        <p data-testid="chunks-summary">{source ? `${source.chunks} chunks, in document order` : '\u00a0'}</p>
        <ErrorBox error={list.error} />
        {!file && <p class="error">No file given: open a file's chunks from its knowledge base.</p>}
        <ol class="list hold-list chunks">
          {list.items.map((c) => (
            <li key={c.chunk_index} data-testid="chunk-row" data-index={c.chunk_index}>
              <small>#{c.chunk_index + 1} · {c.characters} characters{c.tokens != null ? ` · ${c.tokens} tokens` : ''}</small>
              <p class="plain" data-testid="chunk-text">{c.text}</p>
            </li>
          ))}
          {loaded && list.items.length === 0 && !list.error && <li class="empty" data-testid="empty">No chunks: the file is not ingested (yet), or its chunks were removed. Sync the knowledge base to ingest it.</li>}
        </ol>
        {list.pager}
      </Section>
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

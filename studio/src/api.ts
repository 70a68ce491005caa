// The studio's only way to the service: the public API under /api/v1, with the user's bearer
// token. The API key is kept in memory only (to renew the token and to create keys, which a
// token may not do); the token also goes to sessionStorage so that a reload keeps the user
// signed in. Never localStorage, never a URL.

import type { components } from './schema'

const BASE = '/api/v1'
const TOKEN_KEY = 'agentorch.studio.token'

// The API's types, as shared/api/openapi/openapi.yaml describes them: src/schema.d.ts is generated
// from it by `npm run schema` before every check and build, so a field renamed there and still
// used here fails the build.
type Schemas = components['schemas']
export type FieldError = Schemas['FieldError']
export type Agent = Schemas['Agent']
export type AgentVersion = Schemas['AgentVersion']
export type ValidateResult = Schemas['ValidateResult']
export type FileRecord = Schemas['File']
export type PendingUpload = Schemas['PendingUpload']
export type Collection = Schemas['Collection']
export type KnowledgeBase = Schemas['KnowledgeBase']
export type KnowledgeBaseDetail = Schemas['KnowledgeBaseDetail']
export type KnowledgeBaseState = Schemas['KnowledgeBaseState']
export type KnowledgeBaseCheck = Schemas['KnowledgeBaseCheck']
export type SearchResult = Schemas['SearchResult']
export type SearchHit = Schemas['SearchHit']
export type ApiKey = Schemas['ApiKey']
export type ApiKeyCreated = Schemas['ApiKeyCreated']
export type TokenResponse = Schemas['TokenResponse']
export type MCPServer = Schemas['MCPServer']
export type MCPTools = Schemas['MCPTools']
export type Session = Schemas['Session']
export type SessionCreated = Schemas['SessionCreated']
export type SessionFromAgent = Schemas['SessionFromAgent']
export type MessageHistory = Schemas['MessageHistory']
export type Citation = Schemas['Citation']
export type RequiredAction = Schemas['RequiredAction']
export type PendingToolCall = Schemas['PendingToolCall']
export type StoredEvent = Schemas['StoredEvent']
export type EventList = Schemas['EventList']
/** The execute result; the document's anyOf on status comes out as extra union members, left out here. */
export type ExecuteResult = Extract<Schemas['ExecuteResult'], { object: unknown }>
/** An event's data (one shape per event type, told apart by the event's type): every field any shape has. */
export type EventFields = Fields<Schemas['EventData']>
/** A server-sent event of a streaming execute. */
export type StreamEvent = Schemas['StreamMessage']

/** The fields of every member of the union U, each optional, with the types U gives it. */
type Fields<U> = { [K in U extends unknown ? keyof U : never]?: U extends unknown ? (K extends keyof U ? U[K] : never) : never }

/** An error answer of the API: the envelope's type, message and field errors. */
export class ApiError extends Error {
  constructor(public status: number, public type: string, message: string, public errors: FieldError[] = []) {
    super(message)
  }
}

interface Token { access_token: string; expires_at: number }

let apiKey = ''
let token: Token | null = load()
let renewTimer: number | undefined
const listeners = new Set<(signedIn: boolean, reason?: string) => void>()

function load(): Token | null {
  try {
    const raw = sessionStorage.getItem(TOKEN_KEY)
    if (!raw) return null
    const t = JSON.parse(raw) as Token
    return t.expires_at > Date.now() ? t : null
  } catch {
    return null
  }
}

/** Calls fn when the user signs in or out (reason: why they were signed out). */
export function onAuth(fn: (signedIn: boolean, reason?: string) => void): () => void {
  listeners.add(fn)
  return () => listeners.delete(fn)
}

export function signedIn(): boolean { return token !== null }
export function hasKey(): boolean { return apiKey !== '' }

/** What a token says of its key: its id (sub) and expiry (kex, seconds). */
interface Claims { sub?: string; kex?: number }

function claims(t: Token | null): Claims | null {
  try {
    const part = t?.access_token.split('.')[1]
    return part ? JSON.parse(atob(part.replace(/-/g, '+').replace(/_/g, '/'))) as Claims : null
  } catch {
    return null
  }
}

/**
 * The signed-in key as its token names it: its id and when it expires (ms since the epoch). Read,
 * not verified (the API verifies): for what the page shows, such as how long a new key may live.
 */
export function keyInfo(): { id: string; expiresAt: number } | null {
  const c = claims(token)
  return c?.sub && c.kex ? { id: c.sub, expiresAt: c.kex * 1000 } : null
}

/**
 * Gives the page the API key again after a reload (when only the token is left), so that it can
 * create keys, which a token may not: the key is exchanged for a new token and kept in memory. It
 * must be the key this tab signed in with; another one is refused (sign out to switch keys).
 */
export async function unlock(key: string): Promise<void> {
  const t = await exchange(key.trim())
  const was = claims(token)?.sub
  if (was && claims(t)?.sub !== was) throw new ApiError(0, 'permission_error', 'That is not the key you signed in with: sign out and in again to switch keys.')
  apiKey = key.trim()
  keep(t)
}

async function envelope(res: Response): Promise<ApiError> {
  let type = 'api_error', message = `${res.status} ${res.statusText}`, errors: FieldError[] = []
  try {
    const body = await res.json()
    if (body?.error) {
      type = body.error.type ?? type
      message = body.error.message ?? message
      errors = body.error.errors ?? []
    }
  } catch { /* not JSON: keep the status line */ }
  return new ApiError(res.status, type, message, errors)
}

async function exchange(key: string): Promise<Token> {
  const res = await fetch(BASE + '/auth/token/', { method: 'POST', headers: { 'x-api-key': key } })
  if (!res.ok) throw await envelope(res)
  const body: TokenResponse = await res.json()
  return { access_token: body.access_token, expires_at: Date.now() + body.expires_in * 1000 }
}

function keep(t: Token) {
  token = t
  sessionStorage.setItem(TOKEN_KEY, JSON.stringify(t))
  schedule()
}

// Renew a minute before expiry (or at 80% of a short lifetime) while the key is in memory;
// after a reload only the token is left, and the user is asked to sign in again when it ends.
function schedule() {
  clearTimeout(renewTimer)
  if (!token) return
  const left = token.expires_at - Date.now()
  const at = apiKey ? Math.max(1000, Math.min(left - 60_000, left * 0.8)) : left
  renewTimer = window.setTimeout(async () => {
    if (!apiKey) return signOut('Your session ended: sign in again with your API key.')
    try {
      keep(await exchange(apiKey))
    } catch (e) {
      signOut(reasonOf(e))
    }
  }, at)
}

function reasonOf(e: unknown): string {
  if (e instanceof ApiError && e.status === 401) return `Your API key no longer works (${e.message}): it was revoked or has expired.`
  return e instanceof Error ? e.message : String(e)
}

/** Signs in with an API key: exchanges it for a bearer token. */
export async function signIn(key: string): Promise<void> {
  const t = await exchange(key.trim())
  apiKey = key.trim()
  keep(t)
  listeners.forEach((f) => f(true))
}

/** Forgets the token and the key. */
export function signOut(reason?: string) {
  clearTimeout(renewTimer)
  token = null
  apiKey = ''
  sessionStorage.removeItem(TOKEN_KEY)
  listeners.forEach((f) => f(false, reason))
}

schedule()

function headers(extra?: HeadersInit, useKey = false): Headers {
  const h = new Headers(extra)
  if (useKey && apiKey) h.set('x-api-key', apiKey)
  else if (token) h.set('Authorization', 'Bearer ' + token.access_token)
  return h
}

async function send(method: string, path: string, body?: unknown, opts: { useKey?: boolean; signal?: AbortSignal } = {}): Promise<Response> {
  const form = body instanceof FormData
  const init: RequestInit = { method, headers: headers(body === undefined || form ? undefined : { 'Content-Type': 'application/json' }, opts.useKey), signal: opts.signal }
  if (body !== undefined) init.body = form ? body : JSON.stringify(body)
  const res = await fetch(path.startsWith('/') ? path : BASE + '/' + path, init)
  if (res.status === 401) {
    const err = await envelope(res)
    signOut(reasonOf(err))
    throw err
  }
  if (!res.ok) throw await envelope(res)
  return res
}

/** One JSON request; 204 gives undefined. */
export async function api<T>(method: string, path: string, body?: unknown, opts: { useKey?: boolean; signal?: AbortSignal } = {}): Promise<T> {
  const res = await send(method, path, body, opts)
  if (res.status === 204) return undefined as T
  return res.json() as Promise<T>
}

/** One page of a list, and whether another follows (the Link rel="next" header). */
export interface Page<T> { items: T[]; next: boolean }

/**
 * One page of a list endpoint. Those (agents, versions, sessions, files, collections, knowledge
 * bases, MCP servers, API keys) answer a bare JSON array and name the next page in a Link header
 * (docs/api.md); the wrapped lists (a session's messages and events) are read with api().
 */
export async function page<T>(path: string, limit: number, offset: number, extra = ''): Promise<Page<T>> {
  const sep = path.includes('?') ? '&' : '?'
  const res = await send('GET', `${path}${sep}limit=${limit}&offset=${offset}${extra}`)
  const items: unknown = await res.json()
  if (!Array.isArray(items)) throw new ApiError(res.status, 'api_error', `${path} did not answer a list`)
  return { items, next: /rel="next"/.test(res.headers.get('Link') ?? '') }
}

/**
 * One page of a list paged by cursor (the executions): its items and the cursor of the next page
 * (the after= of its Link rel="next" header; '' at the end).
 */
export async function cursorPage<T>(path: string): Promise<{ items: T[]; next: string }> {
  const res = await send('GET', path)
  const items: unknown = await res.json()
  if (!Array.isArray(items)) throw new ApiError(res.status, 'api_error', `${path} did not answer a list`)
  const link = /<([^>]*)>;\s*rel="next"/.exec(res.headers.get('Link') ?? '')
  return { items, next: link ? new URL(link[1], location.origin).searchParams.get('after') ?? '' : '' }
}

/** Where a streaming execute goes: the deployment's stream address when it has one. */
export function streamBase(): string {
  const meta = document.querySelector('meta[name="agentorch-stream-base"]')
  const base = meta?.getAttribute('content') ?? ''
  return base ? base.replace(/\/$/, '') + BASE : BASE
}

/** POSTs an execute with ?stream=true and calls onEvent for each event as it arrives. */
export async function stream(sessionID: string, body: unknown, onEvent: (e: StreamEvent) => void, signal?: AbortSignal): Promise<void> {
  const res = await send('POST', `${streamBase()}/runtime/${encodeURIComponent(sessionID)}/execute/?stream=true`, body, { signal })
  if (!res.body) throw new ApiError(0, 'api_error', 'This browser cannot read a streamed response')
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader()
  let buf = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) break
    buf += value.replace(/\r\n/g, '\n')
    let cut
    while ((cut = buf.indexOf('\n\n')) >= 0) {
      const block = buf.slice(0, cut)
      buf = buf.slice(cut + 2)
      const e = parseSSE(block)
      // The one place the stream is taken to be as the document describes it (ExecuteStream).
      if (e) onEvent(e as StreamEvent)
    }
  }
  const last = parseSSE(buf)
  if (last) onEvent(last as StreamEvent)
}

/** Parses one server-sent event block ("event:" and "data:" lines): its data as JSON when it is JSON. */
export function parseSSE(block: string): { event: string; data: unknown } | null {
  let event = 'message'
  const data: string[] = []
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue
    const i = line.indexOf(':')
    const field = i < 0 ? line : line.slice(0, i)
    let value = i < 0 ? '' : line.slice(i + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'event') event = value
    else if (field === 'data') data.push(value)
  }
  if (data.length === 0) return null
  const text = data.join('\n')
  try {
    return { event, data: JSON.parse(text) }
  } catch {
    return { event, data: text }
  }
}

/** PUTs a file to a presigned URL, reporting the bytes sent (fetch cannot report upload progress). */
export function putWithProgress(url: string, hdrs: Record<string, string>, file: Blob, onProgress: (sent: number, total: number) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const x = new XMLHttpRequest()
    x.open('PUT', url)
    for (const [k, v] of Object.entries(hdrs)) {
      // The browser sets Content-Length itself and refuses to be told.
      if (k.toLowerCase() !== 'content-length') x.setRequestHeader(k, v)
    }
    x.upload.onprogress = (e) => onProgress(e.loaded, e.total || file.size)
    x.onload = () => (x.status >= 200 && x.status < 300 ? resolve() : reject(new ApiError(x.status, 'api_error', `The upload was refused (${x.status})`)))
    x.onerror = () => reject(new ApiError(0, 'api_error', 'The upload failed: the storage could not be reached'))
    x.send(file)
  })
}

/** A multipart POST (small file uploads). */
export async function postForm<T>(path: string, form: FormData): Promise<T> {
  return (await send('POST', path, form)).json() as Promise<T>
}

// The explorer's only way to the server: fetch with the API key of this tab.
// The key is entered once and kept in sessionStorage, so it lives as long as the tab and no longer.

const KEY_SLOT = "chronomem.apiKey";
const API = "/api/v3";

export class AuthError extends Error {}

export class ApiError extends Error {
  constructor(status, type, message) {
    super(message);
    this.status = status;
    this.type = type;
  }
}

export const apiKey = {
  get: () => sessionStorage.getItem(KEY_SLOT),
  set: (key) => sessionStorage.setItem(KEY_SLOT, key.trim()),
  clear: () => sessionStorage.removeItem(KEY_SLOT),
};

function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) {
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  }
  const text = search.toString();
  return text ? `?${text}` : "";
}

async function request(method, path, { params = {}, body } = {}) {
  const headers = { accept: "application/json" };
  const key = apiKey.get();
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${API}${path}${query(params)}`, {
    method, headers, body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 401) throw new AuthError((await response.json()).error?.message ?? "API key needed");
  if (!response.ok) {
    const error = (await response.json().catch(() => ({}))).error ?? {};
    throw new ApiError(response.status, error.type ?? "Error", error.message ?? response.statusText);
  }
  return response.json();
}

// A graph of the project, {user_id} or {graph_id}, as every graph route takes it; or, on
// `chronomem ui`, a raw store group, {group}.
const TARGET_PARAM = { user: "user_id", graph: "graph_id", group: "group" };
const targetParams = (target) => ({ [TARGET_PARAM[target.kind]]: target.id });

// The sliders' position as query parameters (unset = now).
const timeParams = (time) => ({
  as_of: time.asOf, known_at: time.knownAt, include_superseded: time.superseded ? "true" : undefined,
});

export const api = {
  whoami: () => request("GET", "/explorer/whoami"),
  users: () => request("GET", "/users", { params: { limit: 100 } }),
  graphs: () => request("GET", "/graphs", { params: { limit: 100 } }),
  timeline: (target) => request("GET", "/explorer/timeline", { params: targetParams(target) }),
  snapshot: (target, time, { limit, offset }) =>
    request("GET", "/explorer/snapshot", { params: { ...targetParams(target), ...timeParams(time), limit, offset } }),
  entity: (target, time, id) =>
    request("GET", `/explorer/entities/${encodeURIComponent(id)}`, { params: { ...targetParams(target), ...timeParams(time) } }),
  episode: (target, time, id) =>
    request("GET", `/explorer/episodes/${encodeURIComponent(id)}`, { params: { ...targetParams(target), ...timeParams(time) } }),
  factHistory: (target, id) =>
    request("GET", `/graph/facts/${encodeURIComponent(id)}/history`, { params: targetParams(target) }),
  ingestion: (target) => request("GET", "/explorer/ingestion", { params: targetParams(target) }),
  retry: (target, id) =>
    request("POST", `/explorer/episodes/${encodeURIComponent(id)}/retry`, { params: targetParams(target) }),
  search: (target, body) => request("POST", "/explorer/search", { body: { ...targetParams(target), ...body } }),
};

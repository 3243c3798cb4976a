// The explorer page: pick a graph, draw it page by page, move through time, open what you click.
// `document.body.dataset.state` is "loading" while the page fetches or draws and "ready" after, so
// tests and benchmarks can wait for it; `window.chronomemExplorer` exposes the graph to them.

import { api, apiKey, AuthError } from "./api.js";
import { Details } from "./details.js";
import { el, plural, show } from "./dom.js";
import { GraphView } from "./graph.js";
import { IngestionPanel } from "./ingestion.js";
import { SearchPanel } from "./search.js";
import { TimeControls } from "./timeline.js";

const PAGE = 300; // entities per page: the server ranks them, most mentioned first
const SETTLE_MS = 120; // a slider dragged across many stops fetches once it rests

const $ = (id) => document.getElementById(id);
const state = { target: null, pages: [], generation: 0, timer: null };

const setState = (value) => { document.body.dataset.state = value; };
const say = (text) => { $("status").textContent = text; };

const time = new TimeControls(() => timeMoved());
const graph = new GraphView($("graph"), {
  onEntity: (id) => guarded(() => details.open("entity", id)),
  onFact: (factId) => guarded(() => openFact(factId)),
});
const details = new Details($("panel-details"), {
  target: () => state.target, time: () => time.current(),
  onShow: (id) => { graph.select(id); selectTab("details"); },
});
const search = new SearchPanel({
  target: () => state.target, time: () => time.current(),
  onHit: (scope, id) => guarded(() => details.open(scope === "episodes" ? "episode" : "entity", id)),
});
const ingestion = new IngestionPanel($("ingestion"), {
  target: () => state.target, onEpisode: (id) => guarded(() => details.open("episode", id)),
});
window.chronomemExplorer = { graph, state };

// Every action reports its failure in the status line; a missing or revoked key asks for one.
async function guarded(action) {
  setState("loading");
  try {
    await action();
    say("");
  } catch (error) {
    if (error instanceof AuthError) {
      askForKey(error.message);
      return;
    }
    say(error.message);
  } finally {
    setState("ready");
  }
}

function askForKey(message) {
  const refused = apiKey.get() !== null; // a key was sent and refused: say why
  apiKey.clear();
  $("key-form").hidden = false;
  $("key-error").textContent = refused ? message : "";
  $("key").focus();
}

$("key-form").addEventListener("submit", (event) => {
  event.preventDefault();
  apiKey.set($("key").value);
  $("key").value = "";
  $("key-form").hidden = true;
  guarded(start);
});

async function start() {
  const who = await api.whoami();
  $("project").textContent = who.project;
  search.setRecipes(who.recipes);
  const [users, graphs] = await Promise.all([api.users(), api.graphs()]);
  const options = [
    ...users.users.map((user) => el("option", { value: `user:${user.user_id}` }, `user ${user.user_id}`)),
    ...graphs.graphs.map((g) => el("option", { value: `graph:${g.graph_id}` }, `graph ${g.graph_id}`)),
    ...who.groups.map((id) => el("option", { value: `group:${id}` }, `group ${id}`)),
  ];
  show($("target"), options.length ? options : [el("option", { value: "" }, "no users or graphs yet")]);
  $("target").disabled = !options.length;
  if (options.length) await openTarget($("target").value);
}

$("target").addEventListener("change", () => guarded(() => openTarget($("target").value)));

async function openTarget(value) {
  const [kind, ...rest] = value.split(":");
  state.target = { kind, id: rest.join(":") };
  state.pages = [];
  state.generation += 1;
  graph.clear();
  // The graph first; the slider stops (which read every fact's timestamps) after it.
  await loadPage(0);
  firstRender();
  time.setTimeline(await api.timeline(state.target));
  await ingestion.refresh();
}

const fetchPage = (offset) => api.snapshot(state.target, time.current(), { limit: PAGE, offset });

async function showPage(page) {
  state.pages.push(page);
  performance.mark("chronomem:layout-start");
  await graph.addPage(page);
  performance.measure("chronomem:layout", "chronomem:layout-start");
  showCounts();
}

const loadPage = async (offset) => showPage(await fetchPage(offset));

function firstRender() {
  if (!performance.getEntriesByName("chronomem:first-render").length) {
    requestAnimationFrame(() => performance.mark("chronomem:first-render"));
  }
}

$("more").addEventListener("click", () => guarded(async () => {
  const next = state.pages.at(-1)?.next_offset;
  if (next !== null && next !== undefined) await loadPage(next);
}));
$("fit").addEventListener("click", () => graph.fit());

// The sliders moved: fetch the same pages at the new time, then redraw and reopen the card.
function timeMoved() {
  if (!state.target) return;
  setState("loading");
  clearTimeout(state.timer);
  state.timer = setTimeout(() => guarded(refetch), SETTLE_MS);
}

async function refetch() {
  const generation = ++state.generation;
  const at = time.current();
  const pages = [];
  for (const old of state.pages) pages.push(await api.snapshot(state.target, at, { limit: PAGE, offset: old.offset }));
  if (generation !== state.generation) return; // a later move wins
  state.pages = pages;
  graph.replace(pages);
  showCounts();
  await details.reload();
}

function showCounts() {
  const last = state.pages.at(-1);
  const drawn = state.pages.reduce((sum, page) => sum + page.nodes.length, 0);
  const facts = state.pages.reduce((sum, page) => sum + page.edges.filter((edge) => edge.in_view).length, 0);
  $("loaded").textContent = `${plural(drawn, "entity", "entities")} of ${last.total_entities.toLocaleString("en")}`
    + ` · ${plural(facts, "fact")} in view`;
  $("more").hidden = last.next_offset === null;
  entityList();
}

// The keyboard's way into the graph: every drawn entity as a button.
function entityList() {
  const filter = $("entity-filter").value.trim().toLowerCase();
  const nodes = state.pages.flatMap((page) => page.nodes)
    .filter((node) => !filter || node.name.toLowerCase().includes(filter)).slice(0, 500);
  show($("entity-list"), nodes.map((node) => el("li", {},
    el("button", { type: "button", class: "link", onclick: () => guarded(() => details.open("entity", node.id)) },
      `${node.name} (${plural(node.mentions, "mention")})`))));
}
$("entity-filter").addEventListener("input", entityList);

async function openFact(factId) {
  const edge = state.pages.flatMap((page) => page.edges).find((candidate) => candidate.id === factId);
  if (edge) await details.openFact(factId, edge.source);
}

// Tabs, with the arrow keys moving between them (the ARIA tabs pattern).
const TABS = ["details", "entities", "search", "ingestion"];
function selectTab(name) {
  for (const tab of TABS) {
    const selected = tab === name;
    $(`tab-${tab}`).setAttribute("aria-selected", String(selected));
    $(`tab-${tab}`).tabIndex = selected ? 0 : -1;
    $(`panel-${tab}`).hidden = !selected;
  }
}
TABS.forEach((name, index) => {
  const tab = $(`tab-${name}`);
  tab.addEventListener("click", () => {
    selectTab(name);
    if (name === "ingestion" && state.target) guarded(() => ingestion.refresh());
  });
  tab.addEventListener("keydown", (event) => {
    const step = { ArrowRight: 1, ArrowLeft: -1 }[event.key];
    if (!step) return;
    const next = TABS[(index + step + TABS.length) % TABS.length];
    selectTab(next);
    $(`tab-${next}`).focus();
  });
});
selectTab("details");

guarded(start);

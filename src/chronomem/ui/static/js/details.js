// The Details panel: an entity's card, an episode's card and a fact's card, linked both ways
// (entity → facts → episodes they came from; episode → entities and facts it produced).

import { api } from "./api.js";
import { el, moment, show, span } from "./dom.js";

export class Details {
  constructor(container, { target, time, onShow }) {
    this.container = container;
    this.target = target; // () => the graph being explored
    this.time = time; // () => the sliders' position
    this.onShow = onShow; // (id) => highlight in the graph and bring the panel forward
    this.opened = null; // what to reload when the sliders move: {kind, id}
  }

  async reload() {
    if (this.opened) await this.open(this.opened.kind, this.opened.id);
  }

  async open(kind, id) {
    this.opened = { kind, id };
    const time = this.time();
    if (kind === "entity") this.#entity(await api.entity(this.target(), time, id), time);
    else if (kind === "episode") this.#episode(await api.episode(this.target(), time, id), time);
    this.onShow(id);
  }

  // A fact is shown inside the card of its source entity, unfolded, with its version history.
  async openFact(factId, sourceId) {
    await this.open("entity", sourceId);
    const row = this.container.querySelector(`[data-fact-id="${CSS.escape(factId)}"]`);
    if (row) {
      row.hidden = false;
      row.classList.add("focused");
      row.querySelector("button.history")?.click();
      row.scrollIntoView({ block: "nearest" });
    }
  }

  #entity(entity, time) {
    const visible = entity.facts.filter((fact) => fact.in_view || time.superseded);
    show(this.container,
      el("article", { class: "card", "aria-labelledby": "card-title", dataset: { entityId: entity.id } },
        el("h2", { id: "card-title" }, entity.name),
        el("p", { class: "labels" }, entity.labels.join(" · ")),
        entity.community ? el("p", { class: "community" }, `Community: ${entity.community.name || "unnamed"}`) : null,
        entity.summary ? el("p", { class: "summary" }, entity.summary) : null,
        entity.aliases.length ? el("p", {}, `Also called: ${entity.aliases.join(", ")}`) : null,
        attributes(entity.attributes),
        el("h3", {}, `Facts (${visible.length} shown of ${entity.facts.length})`),
        el("ul", { class: "facts plain" }, entity.facts.map((fact) => this.#factRow(fact, entity.names, time))),
        el("h3", {}, `Episodes (${entity.episodes.length})`),
        el("ul", { class: "episodes plain" }, entity.episodes.map((episode) => this.#episodeRow(episode)))));
  }

  #factRow(fact, names, time) {
    const parties = [fact.source, fact.target, ...fact.others].map((id) => names[id] ?? id);
    const state = fact.in_view ? "in view" : "not in view at this time";
    const history = el("div", { class: "history-list" });
    return el("li", {
      class: `fact ${fact.in_view ? "" : "out-of-view"}`, hidden: !fact.in_view && !time.superseded,
      dataset: { factId: fact.id, inView: String(fact.in_view) },
    },
    el("p", { class: "fact-text" }, fact.fact),
    el("p", { class: "meta" },
      el("span", { class: "relation" }, fact.relation_type), " ",
      el("span", { class: "span", title: "valid_at – invalid_at (world time)" }, span(fact)), " ",
      el("span", { class: "state" }, fact.current ? state : `${state}; superseded or ended`)),
    el("p", { class: "meta" }, `${parties.join(" → ")} · learned ${moment(fact.created_at)}`,
      fact.expired_at ? ` · superseded ${moment(fact.expired_at)}` : ""),
    el("p", { class: "sources" }, fact.episode_ids.length ? "From: " : "No source episode (added as a triple)",
      fact.episode_ids.map((id, index) => el("button", { type: "button", class: "link",
        onclick: () => this.open("episode", id) }, `episode ${index + 1}`))),
    el("button", { type: "button", class: "history link", onclick: () => this.#history(fact.id, history) },
      "Version history"),
    history);
  }

  async #history(factId, container) {
    try {
      const body = await api.factHistory(this.target(), factId);
      // Oldest first: each version of the fact, and when our records held it (recorded_to null: now).
      show(container, el("ol", { class: "versions" }, body.versions.map((version) =>
        el("li", {}, `${span(version.fact)} · recorded ${moment(version.recorded_from)} – `
          + `${version.recorded_to ? moment(version.recorded_to) : "now"} · ${version.fact.fact}`))));
    } catch (error) {
      show(container, el("p", { class: "hint" },
        `History: ${error.message}`));
    }
  }

  #episodeRow(episode) {
    return el("li", {},
      el("button", { type: "button", class: "link", onclick: () => this.open("episode", episode.id) },
        `${moment(episode.reference_time)} · ${episode.text.slice(0, 90)}${episode.text.length > 90 ? "…" : ""}`));
  }

  #episode(provenance, time) {
    const { episode } = provenance;
    show(this.container,
      el("article", { class: "card", "aria-labelledby": "card-title", dataset: { episodeId: episode.id } },
        el("h2", { id: "card-title" }, `Episode (${episode.kind})`),
        el("p", { class: "meta" }, `happened ${moment(episode.reference_time)} · ingested ${moment(episode.created_at)}`,
          ` · ${episode.status}`, episode.source_description ? ` · ${episode.source_description}` : ""),
        episode.last_error ? el("p", { class: "error" }, episode.last_error) : null,
        el("blockquote", { class: "episode-text" }, episode.text),
        el("h3", {}, `Entities mentioned (${provenance.entities.length})`),
        el("ul", { class: "plain inline" }, provenance.entities.map((entity) => el("li", {},
          el("button", { type: "button", class: "link", onclick: () => this.open("entity", entity.id) }, entity.name)))),
        el("h3", {}, `Facts from it (${provenance.facts.length})`),
        el("ul", { class: "facts plain" }, provenance.facts.map((fact) => this.#factRow(fact, provenance.names, time)))));
  }
}

function attributes(values) {
  const entries = Object.entries(values ?? {});
  if (!entries.length) return null;
  return el("dl", { class: "attributes" }, entries.flatMap(([name, value]) =>
    [el("dt", {}, name), el("dd", {}, typeof value === "object" ? JSON.stringify(value) : String(value))]));
}

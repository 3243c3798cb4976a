// The Search panel: runs search and context with a recipe and filters (/explorer/search) and shows
// the context block exactly as an agent receives it, then every hit with its score and methods.

import { api } from "./api.js";
import { el, show } from "./dom.js";

const list = (text) => text.split(",").map((item) => item.trim()).filter(Boolean);

export class SearchPanel {
  constructor({ target, time, onHit }) {
    this.target = target;
    this.time = time;
    this.onHit = onHit; // (scope, id) => open it
    this.form = document.getElementById("search-form");
    this.results = document.getElementById("search-results");
    this.form.addEventListener("submit", (event) => {
      event.preventDefault();
      this.run();
    });
  }

  setRecipes(recipes) {
    const select = document.getElementById("recipe");
    show(select, recipes.map((name) => el("option", { value: name, selected: name === "context" }, name)));
  }

  filters() {
    const value = (id) => document.getElementById(id).value;
    const filters = {};
    if (list(value("relation-types")).length) filters.relation_types = list(value("relation-types"));
    if (list(value("labels")).length) filters.labels = list(value("labels"));
    if (document.getElementById("search-at-time").checked) {
      const time = this.time();
      if (time.asOf) filters.as_of = time.asOf;
      if (time.knownAt) filters.known_at = time.knownAt;
    }
    if (document.getElementById("search-superseded").checked) filters.include_superseded = true;
    return Object.keys(filters).length ? filters : undefined;
  }

  async run() {
    const query = document.getElementById("query").value.trim();
    if (!query) return;
    show(this.results, el("p", { class: "hint" }, "Searching…"));
    try {
      const answer = await api.search(this.target(), {
        query, recipe: document.getElementById("recipe").value, filters: this.filters(),
      });
      this.#render(answer);
    } catch (error) {
      show(this.results, el("p", { class: "error", role: "alert" }, error.message));
    }
  }

  #render(answer) {
    show(this.results,
      el("h3", {}, "Context block (what the agent receives)"),
      el("pre", { id: "context-block", tabindex: "0" }, answer.context || "(empty)"),
      el("h3", {}, `Hits (${answer.hits.length}, recipe ${answer.recipe})`),
      el("table", { class: "hits" },
        el("thead", {}, el("tr", {}, ["scope", "score", "ranked by", "found by", "text"].map((h) => el("th", { scope: "col" }, h)))),
        el("tbody", {}, answer.hits.map((hit) => el("tr", { dataset: { scope: hit.scope, id: hit.id } },
          el("td", {}, hit.scope),
          el("td", { class: "number" }, hit.score.toFixed(4)),
          el("td", {}, hit.reranker),
          el("td", {}, hit.found_by.join(", ") || "—"),
          el("td", {}, ["entities", "episodes"].includes(hit.scope)
            ? el("button", { type: "button", class: "link", onclick: () => this.onHit(hit.scope, hit.id) }, hit.text)
            : hit.text))))));
  }
}

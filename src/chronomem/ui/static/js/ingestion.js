// The Ingestion panel: the graph's queue (failed, processing, pending episodes) with retry for the
// failed ones, and its latest episodes.

import { api } from "./api.js";
import { el, moment, show } from "./dom.js";

export class IngestionPanel {
  constructor(container, { target, onEpisode }) {
    this.container = container;
    this.target = target;
    this.onEpisode = onEpisode;
    document.getElementById("ingestion-refresh").addEventListener("click", () => this.refresh());
  }

  async refresh() {
    const status = await api.ingestion(this.target());
    const count = (name) => `${status.counts[name]}${status.more[name] ? "+" : ""} ${name}`;
    show(this.container,
      el("p", { id: "queue-counts" }, ["pending", "processing", "failed"].map(count).join(" · ")),
      status.episodes.length ? el("ul", { class: "queue plain" }, status.episodes.map((episode) => this.#queued(episode)))
        : el("p", { class: "hint" }, "Nothing waiting: every episode is processed."),
      el("h3", {}, "Latest episodes"),
      el("ul", { class: "plain" }, status.recent.map((episode) => el("li", {},
        el("button", { type: "button", class: "link", onclick: () => this.onEpisode(episode.id) },
          `${moment(episode.reference_time)} · ${episode.status} · ${episode.text.slice(0, 80)}`)))));
  }

  #queued(episode) {
    return el("li", { class: `queued ${episode.status}`, dataset: { episodeId: episode.id, status: episode.status } },
      el("p", {}, el("strong", {}, episode.status), ` · ${episode.attempts} attempts · ${episode.text.slice(0, 80)}`),
      episode.last_error ? el("p", { class: "error" }, episode.last_error) : null,
      episode.status === "failed" ? el("button", { type: "button", onclick: () => this.#retry(episode.id) }, "Retry") : null);
  }

  async #retry(id) {
    await api.retry(this.target(), id);
    await this.refresh();
  }
}
